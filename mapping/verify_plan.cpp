#include "mapping/verify_plan.h"

#include "mapping/programs.h"

namespace wafersim::mapping {

namespace {

// The decode plan's regions rebuilt on the same boxes, each iteration carrying
// `tokens`, for `batch` sequences of one iteration each.
Plan rebuild(const Plan& decode, uint32_t tokens, uint32_t batch) {
  Plan plan;
  plan.phase = Phase::Decode;
  plan.tokens_per_iteration = tokens;
  plan.hw = decode.hw;
  plan.model = decode.model;
  plan.workload = decode.workload;
  plan.workload.batch = batch;
  plan.workload.decode_tokens = 1;
  plan.workload.prompt_lengths.clear();  // the iterations' contexts come from the inputs
  plan.options = decode.options;
  plan.strips = decode.strips;
  for (size_t r = 0; r < decode.regions.size(); ++r) {
    const Region& region = decode.regions[r];
    const RegionContext context = decoded_region_context(decode, r, tokens);
    plan.regions.push_back(build_region(context, region.kind, region.layer, region.box));
    plan.stats.push_back(decode.stats[r]);
  }
  // Every iteration is present at cycle 0; the LM head's feed back reaches no iteration.
  connect_regions(plan);
  build_programs(plan);
  plan.tiles_total = plan.programs.tiles();
  plan.tiles_used = decode.tiles_used;
  plan.sram_peak_bytes = decode.sram_peak_bytes;
  plan.sram_mean_bytes = decode.sram_mean_bytes;
  plan.max_context_tokens = decode.max_context_tokens;
  return plan;
}

}  // namespace

Plan compile_verify_plan(const Plan& decode, uint32_t positions) {
  return rebuild(decode, positions, decode.workload.batch);
}

Plan compile_pipelined_verify_plan(const Plan& decode, uint32_t positions) {
  return rebuild(decode, 1, decode.workload.batch * positions);
}

}  // namespace wafersim::mapping
