// A repaired wafer (docs/DEFECTS.md): the engine and the closed form charge
// the same detours, so with contention off they still agree to the cycle; and
// the detours cost time against the same plan on a perfect wafer.
#include <catch2/catch.hpp>

#include "models/wafer_repairs.h"
#include "tests/backend/decode_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Two spare rows and two spare columns around three dead tiles and a dead link.
std::vector<std::string> tiny_map(std::vector<std::string> overrides = {}) {
  overrides.push_back("hardware.spares.rows=2");
  overrides.push_back("hardware.spares.columns=2");
  overrides.push_back("hardware.defects.map=" + std::string(WAFERSIM_TEST_DATA) + "/defects/tiny-map.yaml");
  return overrides;
}

// Drawn defects: seed 8 leaves the tiny wafer seven dead tiles and two dead links that six of its spares repair.
std::vector<std::string> tiny_drawn(std::vector<std::string> overrides = {}) {
  overrides.push_back("hardware.spares.rows=3");
  overrides.push_back("hardware.spares.columns=3");
  overrides.push_back("hardware.defects.tile_failure_rate=0.01");
  overrides.push_back("hardware.defects.link_failure_rate=0.002");
  overrides.push_back("hardware.defects.seed=8");
  return overrides;
}

}  // namespace

TEST_CASE("defects, contention off: two dense layers agree to the cycle", "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-dense", tiny_map());
}
TEST_CASE("defects, contention off: a batch of three in the root dataflow with relays agrees to the cycle",
          "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-dense",
                      tiny_map({"mapping.dataflow=root", "workload.batch=3", "hardware.fabric.colors=6"}));
}
TEST_CASE("defects, contention off: drawn defects, K-trees and multicast along y agree to the cycle",
          "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-dense",
                      tiny_drawn({"mapping.ktree_levels=3", "mapping.multicast_axis=y"}));
}
TEST_CASE("defects, contention off: the mean detour charge agrees to the cycle", "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-dense",
                      tiny_drawn({"hardware.defects.detour_charge=mean", "workload.batch=2"}));
}
TEST_CASE("defects, contention off: rows shifted past their dead tiles agree to the cycle",
          "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-dense",
                      tiny_drawn({"hardware.spares.scheme=shift", "mapping.multicast_axis=y"}));
}
TEST_CASE("defects, contention off: two wafers with their own drawn defects agree to the cycle",
          "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-moe", tiny_drawn({"hardware.wafers=2", "workload.batch=2"}));
}
TEST_CASE("defects, contention off: MoE layers on two wafers agree to the cycle", "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Decode, "tiny-moe", tiny_map({"workload.batch=2"}));
}
TEST_CASE("defects, contention off: a prefill agrees to the cycle", "[regression][exact][defects]") {
  require_same_cycles(mapping::Phase::Prefill, "tiny-dense", tiny_map());
}
TEST_CASE("defects, contention on: within 10 percent", "[regression][contention][defects]") {
  require_within_ten_percent(mapping::Phase::Decode, "tiny-dense", tiny_map({"workload.batch=2"}));
}

TEST_CASE("defects: the detours slow the same plan down", "[defects]") {
  const std::string tiny_dense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
  const Experiment perfect = load_experiment(tiny_dense, {});
  const Experiment repaired = load_experiment(tiny_dense, tiny_map());
  REQUIRE(repaired.hardware.repairs);
  CHECK(repaired.hardware.repairs->wafer(0).defects.dead_tiles == 3);
  CHECK(repaired.hardware.repairs->wafer(0).defects.dead_links == 1);
  const mapping::Plan perfect_plan = compile_plan(perfect), repaired_plan = compile_plan(repaired);
  CHECK(repaired_plan.programs.programs == perfect_plan.programs.programs);
  const workloads::DecodeInputs inputs(perfect.model, perfect.workload);
  auto analytic = [&](const mapping::Plan& plan) {
    return last_exit(backend::make_backend("analytic")->evaluate(plan, inputs, perfect.sim, {}).timeline);
  };
  CHECK(analytic(repaired_plan) > analytic(perfect_plan));
}

// Llama 3.1 8B on one full WSE-3 (the quickstart's decode, two tokens) with
// the map's defects repaired by two spare rows and two spare columns.
TEST_CASE("defects, contention off: Llama 3.1 8B on a full WSE-3 agrees to the cycle", "[fullscale][defects]") {
  const BothTimings both =
      decode_both_ways_at(std::string(WAFERSIM_TEST_DATA) + "/../../workloads/experiments/quickstart.yaml",
                          tiny_map({"workload.prefill=false", "workload.decode_tokens=2", "sim.contention=false"}));
  REQUIRE(both.plan.hw.fabric.detours);
  CHECK(both.plan.hw.fabric.detours->of(1) == 1);
  CHECK(both.simulated.timeline.finish == both.analytic.finish);
  CHECK(both.simulated.timeline.critical_path == both.analytic.critical_path);
}
