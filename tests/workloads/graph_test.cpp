// Structure of the decode and prefill graphs, and their agreement with
// layer_matrices(), count_params() and kv_bytes_per_position().
#include "workloads/graph.h"

#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "workloads/model_file.h"
#include "workloads/workload_spec.h"

using namespace wafersim::workloads;

namespace {

void check_well_formed(const Graph& graph) {
  REQUIRE(!graph.ops.empty());
  std::vector<bool> consumed(graph.ops.size(), false);
  for (uint32_t i = 0; i < graph.ops.size(); ++i) {
    const GraphOp& op = graph.ops[i];
    INFO(op.name);
    if (i == 0)
      CHECK(op.kind == OpKind::Embedding);
    else
      CHECK(!op.deps.empty());
    for (uint32_t dep : op.deps) {
      CHECK(dep < i);  // only earlier ops: the list is a topological order
      if (dep < i) consumed[dep] = true;
    }
    CHECK(std::set<uint32_t>(op.deps.begin(), op.deps.end()).size() == op.deps.size());
  }
  // Every result but the sampled token feeds a later op.
  CHECK(graph.ops.back().kind == OpKind::Sample);
  for (uint32_t i = 0; i + 1 < graph.ops.size(); ++i) {
    INFO(graph.ops[i].name);
    CHECK(consumed[i]);
  }
}

const GraphOp& find_op(const Graph& graph, const std::string& name) {
  for (const GraphOp& op : graph.ops)
    if (op.name == name) return op;
  FAIL("no op " << name);
  return graph.ops.front();
}

}  // namespace

TEST_CASE("decode and prefill graphs are well formed for every zoo model", "[graph]") {
  for (const std::string& name : zoo_model_names()) {
    INFO(name);
    const ModelSpec model = load_model(name).model;
    check_well_formed(build_decode_graph(model, {4, 777, 3}));
    check_well_formed(build_prefill_graph(model, {2, 40, 3}));
  }
}

TEST_CASE("a dense layer reads each of its matrices once, in layer_matrices order", "[graph]") {
  const ModelSpec model = load_model("tiny-dense").model;
  const Graph graph = build_decode_graph(model, {1, 10, 1});
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    const std::vector<MatrixSpec> matrices = layer_matrices(model, layer);
    std::vector<int32_t> used;
    uint64_t matrix_bytes = 0;
    for (const GraphOp& op : graph.ops)
      if (op.layer == int32_t(layer) && op.kind == OpKind::MatMul) {
        used.push_back(op.matrix);
        CHECK(op.weight_bytes_read == matrices[op.matrix].bytes());
        CHECK(op.input_shape == std::vector<uint64_t>{1, matrices[op.matrix].d_in});
        CHECK(op.output_shape == std::vector<uint64_t>{1, matrices[op.matrix].d_out});
      }
    for (const MatrixSpec& m : matrices) matrix_bytes += m.bytes();
    CHECK(used == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6});
    // Norm weights are the rest of what the layer reads.
    CHECK(layer_totals(graph, int32_t(layer)).weight_bytes_read ==
          matrix_bytes + 2 * layer_vector_params(model, layer));
  }
}

TEST_CASE("one decode step reads every weight once, and one row of the embedding", "[graph]") {
  for (const char* name : {"tiny-dense", "llama3.1-8b", "qwen2-72b", "qwen3-32b"}) {
    INFO(name);
    const ModelSpec model = load_model(name).model;
    const uint64_t table = 2ull * model.vocab_size * model.d_model;  // bf16
    const uint64_t row = 2ull * model.d_model;
    CHECK(graph_totals(build_decode_graph(model, {1, 64, 1})).weight_bytes_read ==
          count_params(model).weight_bytes - table + row);
  }
  // Tied: the LM head reads the one table.
  const ModelSpec tied = load_model("tiny-dense", {"model.tied_embeddings=true"}).model;
  CHECK(graph_totals(build_decode_graph(tied, {1, 64, 1})).weight_bytes_read ==
        count_params(tied).weight_bytes + 2ull * tied.d_model);
}

TEST_CASE("MoE layers run the experts the router chose, with their token counts", "[graph][moe]") {
  const ModelSpec model = load_model("tiny-moe").model;
  const uint32_t batch = 5;
  const uint64_t context = 33;
  const Graph graph = build_decode_graph(model, {batch, context, 17});
  const ExpertRouter router(17, model.moe.n_experts, model.moe.top_k);
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    std::map<int32_t, uint64_t> expected;
    for (uint32_t s = 0; s < batch; ++s)
      for (uint32_t e = 0; e < model.moe.n_experts; ++e)
        if (router.routed(s, context - 1, layer, e)) ++expected[int32_t(e)];
    std::map<int32_t, uint64_t> seen;
    for (const GraphOp& op : graph.ops)
      if (op.layer == int32_t(layer) && op.kind == OpKind::MatMul && op.expert >= 0 &&
          op.name.find("down_proj") != std::string::npos)
        seen[op.expert] = op.tokens;
    CHECK(seen == expected);
  }
}

TEST_CASE("with every expert routed, an MoE layer reads all of layer_matrices()", "[graph][moe]") {
  const ModelSpec model = load_model("tiny-moe").model;
  const Graph graph = build_decode_graph(model, {64, 8, 1});  // 128 choices over 8 experts
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    std::set<int32_t> used;
    uint64_t bytes = 0;
    for (const GraphOp& op : graph.ops)
      if (op.layer == int32_t(layer) && op.kind == OpKind::MatMul) used.insert(op.matrix);
    for (const MatrixSpec& m : layer_matrices(model, layer)) bytes += m.bytes();
    CHECK(used.size() == layer_matrices(model, layer).size());
    CHECK(layer_totals(graph, int32_t(layer)).weight_bytes_read == bytes + 2 * layer_vector_params(model, layer));
  }
}

TEST_CASE("decode graphs repeat exactly for the same seed", "[graph][moe]") {
  const ModelSpec model = load_model("gpt-oss-120b").model;
  const Graph a = build_decode_graph(model, {3, 500, 9}), b = build_decode_graph(model, {3, 500, 9});
  REQUIRE(a.ops.size() == b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    CHECK(a.ops[i].name == b.ops[i].name);
    CHECK(a.ops[i].tokens == b.ops[i].tokens);
  }
}

TEST_CASE("windowed layers attend to the window, full layers to the context", "[graph]") {
  const ModelSpec model = load_model("gpt-oss-120b").model;
  const Graph graph = build_decode_graph(model, {2, 1000, 1});
  const uint64_t key_bytes = 8 * 64 * 2;  // kv heads x head_dim x bf16
  const GraphOp& windowed = find_op(graph, "layers.0.attention_scores");
  const GraphOp& full = find_op(graph, "layers.1.attention_scores");
  CHECK(windowed.output_shape == std::vector<uint64_t>{2, 64, 128});
  CHECK(full.output_shape == std::vector<uint64_t>{2, 64, 1000});
  CHECK(windowed.kv_bytes_read == 2 * 128 * key_bytes);
  CHECK(full.kv_bytes_read == 2 * 1000 * key_bytes);
  // Sinks: one extra logit per head and sequence in the softmax.
  CHECK(find_op(graph, "layers.0.softmax").flops == 5 * 64 * (2 * 128 + 2));
  CHECK(kv_bytes_at_context(model, 1000) == (18 * 128 + 18 * 1000) * 2 * key_bytes);
}

TEST_CASE("attention reads the cache after the new position is appended", "[graph]") {
  const Graph graph = build_decode_graph(load_model("tiny-1layer").model, {1, 5, 1});
  uint32_t append = 0, scores = 0;
  for (uint32_t i = 0; i < graph.ops.size(); ++i) {
    if (graph.ops[i].kind == OpKind::KvAppend) append = i;
    if (graph.ops[i].kind == OpKind::AttentionScores) scores = i;
  }
  REQUIRE(append > 0);
  CHECK(std::count(graph.ops[scores].deps.begin(), graph.ops[scores].deps.end(), append) == 1);
}

TEST_CASE("prefill runs the LM head on the last token of each sequence", "[graph]") {
  const ModelSpec model = load_model("tiny-dense").model;
  const Graph graph = build_prefill_graph(model, {3, 20, 1});
  CHECK(find_op(graph, "layers.0.q_proj").input_shape == std::vector<uint64_t>{60, 256});
  CHECK(find_op(graph, "lm_head").output_shape == std::vector<uint64_t>{3, 1024});
  CHECK(graph_totals(graph).kv_bytes_written == 60 * 2 * kv_bytes_per_position(model));
}

TEST_CASE("prefill routes each prompt position with the same key decode would use", "[graph][moe]") {
  const ModelSpec model = load_model("tiny-moe").model;
  const uint32_t batch = 2;
  const uint64_t p = 30;
  const Graph graph = build_prefill_graph(model, {batch, p, 4});
  const ExpertRouter router(4, model.moe.n_experts, model.moe.top_k);
  std::map<int32_t, uint64_t> expected, seen;
  for (uint32_t s = 0; s < batch; ++s)
    for (uint64_t position = 0; position < p; ++position)
      for (uint32_t e = 0; e < model.moe.n_experts; ++e)
        if (router.routed(s, position, 1, e)) ++expected[int32_t(e)];
  for (const GraphOp& op : graph.ops)
    if (op.layer == 1 && op.kind == OpKind::MatMul && op.expert >= 0 && op.name.find("up_proj") != std::string::npos)
      seen[op.expert] = op.tokens;
  CHECK(seen == expected);
}
