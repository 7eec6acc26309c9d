// The prefill plan: the decode plan's regions rebuilt for chunks of the prompt.
// Every step's work and messages scale with the chunk (StepEnv::tokens), which
// times a chunk as its tokens passing each step back to back: a step starts
// once the whole chunk has reached it, so tokens of one chunk do not overlap
// across steps (chunks overlap across regions, in the layer pipeline).
#include "mapping/plan.h"
#include "mapping/programs.h"

namespace wafersim::mapping {

Plan compile_prefill_plan(const Plan& decode) {
  Plan plan;
  plan.phase = Phase::Prefill;
  plan.tokens_per_iteration = uint32_t(decode.workload.prefill_chunk_size());
  plan.hw = decode.hw;
  plan.model = decode.model;
  plan.workload = decode.workload;
  plan.options = decode.options;
  plan.strips = decode.strips;
  const RegionContext context{&plan.hw, &plan.model, &plan.options,
                              plan.hw.fabric.colors - plan.hw.fabric.colors_reserved, plan.tokens_per_iteration};
  for (size_t r = 0; r + 1 < decode.regions.size(); ++r) {  // all but the LM head
    const Region& region = decode.regions[r];
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
