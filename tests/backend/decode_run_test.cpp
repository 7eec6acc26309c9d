// A decode run counts its energy and its experts' load on another thread
// while the backend times it: what it reports must be what counting after
// the timeline gives, with either backend.
#include "sim/reports/decode_run.h"

#include <numeric>

#include <catch2/catch.hpp>

#include "sim/experiment/metrics.h"
#include "tests/backend/decode_fixture.h"

using namespace wafersim;

TEST_CASE("a decode's energy and expert load counted beside its timeline are those counted after it", "[energy][moe]") {
  for (const std::string backend_name : {"analytic", "sim"}) {
    INFO("backend " << backend_name);
    // Windows far shorter than the run, so that the peak reads every iteration's joules.
    const Experiment experiment = load_experiment(std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml",
                                                  {"workload.prefill=false", "hardware.energy.peak_window_cycles=300"});
    const mapping::Plan plan = compile_plan(experiment);
    const std::unique_ptr<backend::Backend> backend = backend::make_backend(backend_name);
    const reports::DecodeRun run = reports::run_decode(experiment, plan, *backend, experiment.sim, {});

    const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
    const DecodeMetrics after = decode_metrics(plan, run.evaluation.timeline, inputs);
    const EnergyMetrics& beside = run.metrics.energy;
    CHECK(beside.events == after.energy.events);
    CHECK(beside.joules.total() == after.energy.joules.total());
    CHECK(beside.peak_power_watts == after.energy.peak_power_watts);
    CHECK(beside.peak_power_watts > beside.average_power_watts);
    REQUIRE(run.metrics.moe);
    REQUIRE(after.moe);
    CHECK(run.metrics.moe->max_tokens == after.moe->max_tokens);
    CHECK(run.metrics.moe->mean_tokens == after.moe->mean_tokens);
    CHECK(run.metrics.moe->idle_fraction == after.moe->idle_fraction);
  }
}

TEST_CASE("each iteration's joules per region add up to the dynamic energy of the events counted", "[energy]") {
  const Experiment experiment = load_experiment(std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml",
                                                {"hardware.energy.peak_window_cycles=300"});
  const mapping::Plan plan = compile_plan(experiment);
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
  const CountedEnergy counted = count_energy(plan, inputs, plan.hw);
  REQUIRE(counted.regions == plan.regions.size());
  REQUIRE(counted.joules.size() == plan.programs.iterations * (plan.regions.size() + 1));
  const double joules = std::accumulate(counted.joules.begin(), counted.joules.end(), 0.0);
  CHECK(joules > 0);
  CHECK(joules == Approx(dynamic_energy(plan.hw.energy, counted.events).total()).epsilon(1e-12));
}
