// metrics.moe: the experts' load per decode step, against the decode graph,
// which routes the batch's tokens on its own and counts each expert's tokens.
#include "workloads/expert_load.h"

#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/graph.h"
#include "workloads/model_file.h"

using namespace wafersim::workloads;

namespace {

WorkloadSpec decode_of(uint32_t batch, uint64_t decode_tokens) {
  WorkloadSpec workload;
  workload.batch = batch;
  workload.prompt_tokens = 16;
  workload.decode_tokens = decode_tokens;
  workload.seed = 11;
  return workload;
}

// The same means, from each step's graph: an expert's activation op carries the tokens routed to it.
ExpertLoad load_from_graphs(const ModelSpec& model, const WorkloadSpec& workload) {
  ExpertLoad load;
  double samples = 0;
  for (uint64_t step = 0; step < workload.decode_tokens; ++step) {
    const Graph graph = build_decode_graph(model, {workload.batch, workload.prompt_tokens + step + 1, workload.seed});
    for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
      if (!model.is_moe_layer(layer)) continue;
      std::vector<uint64_t> tokens(model.moe.n_experts, 0);
      for (const GraphOp& op : graph.ops)
        if (op.layer == int32_t(layer) && op.kind == OpKind::Activation && op.expert >= 0)
          tokens[op.expert] = op.tokens;
      const double busy = double(std::count_if(tokens.begin(), tokens.end(), [](uint64_t n) { return n > 0; }));
      uint64_t total = 0;
      for (uint64_t n : tokens) total += n;
      load.max_tokens += double(*std::max_element(tokens.begin(), tokens.end()));
      load.mean_tokens += double(total) / busy;
      load.idle_fraction += 1.0 - busy / double(model.moe.n_experts);
      ++samples;
    }
  }
  load.max_tokens /= samples;
  load.mean_tokens /= samples;
  load.idle_fraction /= samples;
  return load;
}

}  // namespace

TEST_CASE("the experts' load per decode step is the decode graph's", "[expert_load][moe]") {
  const ModelSpec model = load_model("tiny-moe").model;
  for (uint32_t batch : {1u, 3u, 16u}) {
    INFO("batch " << batch);
    const WorkloadSpec workload = decode_of(batch, 5);
    const ExpertLoad load = decode_expert_load(model, workload), graph = load_from_graphs(model, workload);
    CHECK(load.max_tokens == Approx(graph.max_tokens));
    CHECK(load.mean_tokens == Approx(graph.mean_tokens));
    CHECK(load.idle_fraction == Approx(graph.idle_fraction));
    CHECK(load.max_tokens >= load.mean_tokens);
    CHECK(load.mean_tokens >= 1.0);
  }
  // One token per step: top_k experts take one token each, the others none.
  const ExpertLoad single = decode_expert_load(model, decode_of(1, 5));
  CHECK(single.max_tokens == 1.0);
  CHECK(single.mean_tokens == 1.0);
  CHECK(single.idle_fraction == Approx(1.0 - double(model.moe.top_k) / model.moe.n_experts));
  // A large batch leaves fewer experts idle and loads the busiest more.
  const ExpertLoad wide = decode_expert_load(model, decode_of(64, 5));
  CHECK(wide.idle_fraction < single.idle_fraction);
  CHECK(wide.max_tokens > single.max_tokens);
}

TEST_CASE("a dense model has no expert load", "[expert_load]") {
  const ExpertLoad load = decode_expert_load(load_model("tiny-dense").model, decode_of(4, 3));
  CHECK(load.max_tokens == 0);
  CHECK(load.mean_tokens == 0);
  CHECK(load.idle_fraction == 0);
}
