// mapping::release_program_sources: `run` frees the task lists the regions'
// blocks hold for build_programs before it simulates. Nothing it reads
// afterwards may change: the programs, the closed form, and the prefill plan
// it compiles from the released decode plan.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/programs.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/prefill_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Whether any block still holds storage for a list only build_programs reads.
bool holds_program_sources(const mapping::Plan& plan) {
  for (const mapping::Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      if (block.root_prologue.capacity() + block.root_epilogue.capacity() + block.line_prologue.capacity() +
              block.line_epilogue.capacity() + block.dispatch_in.capacity() + block.dispatch_below.capacity() +
              block.dispatch_below_last.capacity() + block.root_combine.capacity() + block.row_combine.capacity() >
          0)
        return true;
  return false;
}

void require_same_programs(const ProgramSet& a, const ProgramSet& b) {
  REQUIRE(a.programs == b.programs);
  REQUIRE(a.tile_program == b.tile_program);
  REQUIRE(a.tile_param == b.tile_param);
  REQUIRE(a.iterations == b.iterations);
  REQUIRE(a.injections.size() == b.injections.size());
}

void require_same_timeline(const mapping::DecodeTimeline& a, const mapping::DecodeTimeline& b) {
  REQUIRE(a.start == b.start);
  REQUIRE(a.finish == b.finish);
  REQUIRE(a.critical_path == b.critical_path);
}

}  // namespace

TEST_CASE("released program sources change neither the programs nor the closed form, decode or prefill",
          "[mapping][release]") {
  struct Case {
    std::string model;
    std::vector<std::string> overrides;
  };
  // Every kind of list: slices hand-offs (line prologues and epilogues), root
  // hand-offs, and an MoE layer's dispatch and combine by tree and by columns.
  const std::vector<Case> cases = {
      {"tiny-dense", {}},
      {"tiny-dense", {"mapping.dataflow=root"}},
      {"tiny-moe", {"mapping.moe_combine=tree"}},
      {"tiny-moe", {"mapping.moe_combine=columns"}},
  };
  for (const Case& c : cases) {
    INFO(c.model << (c.overrides.empty() ? "" : " " + c.overrides[0]));
    const Experiment experiment = load_experiment_text(zoo_experiment(c.model, "tiny"), "release.yaml", c.overrides);
    const mapping::Plan kept = compile(experiment);
    mapping::Plan released = compile(experiment);
    REQUIRE(holds_program_sources(released));
    mapping::release_program_sources(released);
    CHECK_FALSE(holds_program_sources(released));

    require_same_programs(kept.programs, released.programs);
    const workloads::DecodeInputs decode_inputs(experiment.model, experiment.workload);
    require_same_timeline(mapping::analytic_timeline(kept, decode_inputs),
                          mapping::analytic_timeline(released, decode_inputs));

    const mapping::Plan prefill_kept = mapping::compile_prefill_plan(kept);
    const mapping::Plan prefill_released = mapping::compile_prefill_plan(released);
    require_same_programs(prefill_kept.programs, prefill_released.programs);
    const workloads::PrefillInputs prefill_inputs(prefill_kept.workload);
    require_same_timeline(mapping::analytic_timeline(prefill_kept, prefill_inputs),
                          mapping::analytic_timeline(prefill_released, prefill_inputs));
  }
}
