// mapping.moe_experts_per_row: auto. The compiler times the expert rows it
// tries (near-square blocks, and rows of 0.5 to 1.5 times as many experts)
// with every expert routed at the workload's largest context, and keeps the
// fastest that fits: every other row of experts in the same box is slower,
// or does not fit its tiles. And a plan built with its choice fixed is the same.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "mapping/context_steps.h"
#include "mapping/region.h"
#include "mapping/tile_sram.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

bool fits(const mapping::Plan& plan, const mapping::Region& region) {
  for (const mapping::Block& block : region.blocks)
    for (uint32_t i = 0; i < block.geo.rows; ++i)
      for (uint32_t j = 0; j < block.geo.cols; ++j) {
        const mapping::TileSram sram =
            mapping::tile_sram(block, i, j, plan.workload.max_context(), plan.options.stream_buffer_bytes);
        if (plan.hw.tile.runtime_reserved_bytes + sram.weights + sram.kv + sram.activations > plan.hw.tile.sram_bytes)
          return false;
      }
  return true;
}

}  // namespace

TEST_CASE("the compiler keeps the fastest expert rows that fit", "[mapping][moe]") {
  for (const std::string model : {"tiny-moe", "gpt-oss-20b"}) {
    INFO(model);
    const std::string hardware = model == "tiny-moe" ? "tiny" : "wse3";
    const Experiment experiment =
        load_experiment_text(zoo_experiment(model, hardware, 512, 2), "shape.yaml", {"workload.prefill=false"});
    const mapping::Plan plan = compile(experiment);
    const auto moe = std::find_if(plan.regions.begin(), plan.regions.end(),
                                  [](const mapping::Region& r) { return r.kind == mapping::RegionKind::Moe; });
    REQUIRE(moe != plan.regions.end());
    const size_t r = size_t(moe - plan.regions.begin());
    const mapping::EveryExpertAt busiest(plan.workload.max_context());
    const uint64_t chosen = moe->finish(mapping::Timed{}, busiest, 0).cycle;
    mapping::RegionContext context = mapping::decoded_region_context(plan, r, 1);
    context.experts_per_row = 0;
    const uint32_t near_square = mapping::build_region(context, moe->kind, moe->layer, moe->box).experts_per_row;
    uint32_t faster_fitting = 0, built = 0;
    for (const double scale : mapping::kExpertRowScales) {
      context.experts_per_row = uint32_t(std::max(1.0, std::round(near_square * scale)));
      mapping::Region other;
      try {
        other = mapping::build_region(context, moe->kind, moe->layer, moe->box);
      } catch (const mapping::TooFewRows&) {
        continue;
      }
      ++built;
      if (other.finish(mapping::Timed{}, busiest, 0).cycle < chosen && fits(plan, other)) ++faster_fitting;
    }
    CHECK(built > 1);
    CHECK(faster_fitting == 0);

    // Fixed to the compiler's choice, the plan times the same.
    const Experiment fixed = load_experiment_text(
        zoo_experiment(model, hardware, 512, 2), "shape.yaml",
        {"workload.prefill=false", "mapping.moe_experts_per_row=" + std::to_string(moe->experts_per_row)});
    const mapping::Plan again = compile(fixed);
    REQUIRE(again.regions.size() == plan.regions.size());
    CHECK(again.regions[r].experts_per_row == moe->experts_per_row);
    CHECK(again.regions[r].finish(mapping::Timed{}, busiest, 0).cycle == chosen);
  }
}
