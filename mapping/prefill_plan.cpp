// The prefill plan: the decode plan's regions rebuilt for chunks of the prompt.
// Every step's work and messages scale with the chunk (StepEnv::tokens), which
// times a chunk as its tokens passing each step back to back: a step starts
// once the whole chunk has reached it, so tokens of one chunk do not overlap
// across steps (chunks overlap across regions, in the layer pipeline).
#include <algorithm>
#include <vector>

#include "mapping/plan.h"
#include "mapping/programs.h"
#include "workloads/workload_spec.h"

namespace wafersim::mapping {

namespace {

// Tokens the busiest routed expert of an MoE layer takes per chunk, routed
// token by token as decode routes them (ExpertRouter, keyed by sequence and
// position; padding is not routed): the mean over the prompt's chunks of each
// chunk's busiest expert, rounded up. The plan gives every routed expert that
// many tokens, since a chunk leaves the layer when its busiest expert is done;
// an expert's time is linear in its tokens, so the layer's total over the
// chunks is the busiest experts' to within the rounding.
uint32_t busiest_expert_tokens(const workloads::ModelSpec& m, const workloads::WorkloadSpec& w, uint32_t layer) {
  const workloads::ExpertRouter router(w.seed, m.moe.n_experts, m.moe.top_k);
  const uint64_t size = w.prefill_chunk_size();
  std::vector<uint32_t> load(m.moe.n_experts), chosen(m.moe.top_k);
  uint64_t busiest_sum = 0, chunks = 0;
  for (const auto& [sequence, chunk] : w.prefill_order()) {
    std::fill(load.begin(), load.end(), 0);
    const uint64_t first = chunk * size, end = std::min(first + size, w.prompt(sequence));
    for (uint64_t position = first; position < end; ++position) {
      router.route(sequence, position, layer, chosen.data());
      for (uint32_t expert : chosen) ++load[expert];
    }
    busiest_sum += *std::max_element(load.begin(), load.end());
    ++chunks;
  }
  return chunks == 0 ? 0 : uint32_t((busiest_sum + chunks - 1) / chunks);
}

}  // namespace

Plan compile_prefill_plan(const Plan& decode) {
  Plan plan;
  plan.phase = Phase::Prefill;
  plan.tokens_per_iteration = uint32_t(decode.workload.prefill_chunk_size());
  plan.hw = decode.hw;
  plan.model = decode.model;
  plan.workload = decode.workload;
  plan.options = decode.options;
  plan.strips = decode.strips;
  for (size_t r = 0; r + 1 < decode.regions.size(); ++r) {  // all but the LM head
    const Region& region = decode.regions[r];
    RegionContext context = decoded_region_context(decode, r, plan.tokens_per_iteration);
    context.prefill = true;
    context.expert_tokens =
        region.kind == RegionKind::Moe ? busiest_expert_tokens(plan.model, plan.workload, uint32_t(region.layer)) : 0;
    // The last layer gathers its slices to its root, where the prefill ends:
    // the chunk's last position only, the one the LM head would take.
    const bool last_layer = r + 2 == decode.regions.size();
    context.slices_out = context.slices_out && !last_layer;
    context.last_position_out = last_layer;
    plan.regions.push_back(build_region(context, region.kind, region.layer, region.box));
    plan.stats.push_back(decode.stats[r]);
  }
  connect_regions(plan);
  build_programs(plan);
  plan.tiles_total = plan.programs.tiles();
  for (const RegionStats& stats : plan.stats) plan.tiles_used += stats.tiles;
  return plan;
}

}  // namespace wafersim::mapping
