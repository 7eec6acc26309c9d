// DecodeInputs, the per-iteration inputs the engine and the closed form read,
// against the decode graph: both route a token by its position in its sequence.
#include "workloads/decode_inputs.h"

#include <catch2/catch.hpp>

#include "workloads/graph.h"
#include "workloads/model_file.h"
#include "workloads/workload_spec.h"

using namespace wafersim::workloads;

namespace {

WorkloadSpec decoding(uint32_t batch, uint64_t prompt_tokens, uint64_t decode_tokens, uint64_t seed) {
  WorkloadSpec workload;
  workload.batch = batch;
  workload.prompt_tokens = prompt_tokens;
  workload.decode_tokens = decode_tokens;
  workload.seed = seed;
  return workload;
}

}  // namespace

TEST_CASE("decode inputs route each token at its position, as the decode graph does", "[decode_inputs][moe]") {
  const ModelSpec model = load_model("tiny-moe").model;
  const WorkloadSpec workload = decoding(2, 16, 4, 7);
  const DecodeInputs inputs(model, workload);
  const ExpertRouter router(workload.seed, model.moe.n_experts, model.moe.top_k);

  for (uint64_t step = 0; step < workload.decode_tokens; ++step) {
    const uint64_t context = workload.prompt_tokens + step + 1;
    const Graph graph = build_decode_graph(model, {workload.batch, context, workload.seed});
    for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
      REQUIRE(model.is_moe_layer(layer));
      std::vector<uint64_t> graph_tokens(model.moe.n_experts, 0);
      for (const GraphOp& op : graph.ops)
        if (op.layer == int32_t(layer) && op.kind == OpKind::Activation && op.expert >= 0)
          graph_tokens[op.expert] = op.tokens;
      for (uint32_t expert = 0; expert < model.moe.n_experts; ++expert) {
        INFO("step " << step << ", layer " << layer << ", expert " << expert);
        uint64_t routed = 0;
        for (uint64_t sequence = 0; sequence < workload.batch; ++sequence) {
          const uint64_t iteration = step * workload.batch + sequence;
          CHECK(inputs.context(iteration) == context);
          const bool chosen = inputs.expert_routed(iteration, layer, expert);
          // The new token sits at position context - 1 = prompt_tokens + step.
          CHECK(chosen == router.routed(sequence, workload.prompt_tokens + step, layer, expert));
          routed += chosen ? 1 : 0;
        }
        CHECK(routed == graph_tokens[expert]);
      }
    }
  }
}

TEST_CASE("decode inputs list the routed experts as expert_routed answers each", "[decode_inputs][moe]") {
  const ModelSpec model = load_model("gpt-oss-120b").model;
  const WorkloadSpec workload = decoding(3, 100, 20, 11);
  const DecodeInputs inputs(model, workload);
  std::vector<uint32_t> listed;
  for (uint64_t iteration = 0; iteration < workload.batch * workload.decode_tokens; ++iteration)
    for (uint32_t layer = 0; layer < model.n_layers; layer += 5)
      for (const uint32_t count : {model.moe.n_experts, model.moe.n_experts / 2, 1u}) {
        // The list first, then each expert: either order must read the same routing.
        inputs.routed_experts(iteration, layer, count, listed);
        std::vector<uint32_t> asked;
        for (uint32_t expert = 0; expert < count; ++expert)
          if (inputs.expert_routed(iteration, layer, expert)) asked.push_back(expert);
        INFO("iteration " << iteration << ", layer " << layer << ", experts " << count);
        CHECK(listed == asked);
        if (count == model.moe.n_experts) CHECK(listed.size() == model.moe.top_k);
      }
}
