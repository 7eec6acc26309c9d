#include "mapping/plan.h"

namespace wafersim::mapping {

RegionContext decoded_region_context(const Plan& decode, size_t r, uint32_t tokens) {
  RegionContext context;
  context.hw = &decode.hw;
  context.model = &decode.model;
  context.options = &decode.options;
  context.colors_available = decode.hw.fabric.colors - decode.hw.fabric.colors_reserved;
  context.tokens = tokens;
  context.max_context = decode.workload.max_context();  // as compile_plan built the regions
  context.slices_in = decode.regions[r].slices_in;
  context.slices_out = decode.regions[r].slices_out;
  context.experts_per_row = decode.regions[r].experts_per_row;
  return context;
}

}  // namespace wafersim::mapping
