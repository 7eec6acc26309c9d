// SystemC counts time in 64-bit ticks: a run that would pass that limit stops
// with CycleLimitError instead of wrapping around and running for ever.
#include <string>

#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

TEST_CASE("a run past SystemC's time limit stops with a cycle-limit error", "[engine][limit]") {
  const HardwareSpec hw = wse3_like(4, 4);
  ProgramSet set = empty_set(4, 4);
  // Each compute takes about flops / 16 cycles at FP16: two of them pass the limit, one does not.
  const uint64_t flops = sim::max_simulated_cycles() / 2 * 17;
  place(set, 0, 0, {compute({flops, 0, 0}), compute({flops, 0, 0})});
  try {
    sim::run_programs(hw, set, sim::SteadyInputs(), {});
    FAIL("expected CycleLimitError");
  } catch (const CycleLimitError& error) {
    CHECK(std::string(error.what()).find("SystemC's time limit") != std::string::npos);
  }
}

TEST_CASE("a run just short of SystemC's time limit completes", "[engine][limit]") {
  const HardwareSpec hw = wse3_like(4, 4);
  ProgramSet set = empty_set(4, 4);
  const uint64_t flops = sim::max_simulated_cycles() / 2 * 16;
  place(set, 0, 0, {compute({flops, 0, 0})});
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  CHECK(result.end_cycle > sim::max_simulated_cycles() / 2);
  CHECK(result.end_cycle <= sim::max_simulated_cycles());
}
