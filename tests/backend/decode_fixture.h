#pragma once
// One decode (or prefill) experiment through both backends: the engine and the closed form.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

namespace wafersim::testing {

struct BothTimings {
  mapping::Plan plan;
  mapping::DecodeTimeline analytic;
  backend::Evaluation simulated;
};

inline BothTimings decode_both_ways_at(const std::string& experiment_path, const std::vector<std::string>& overrides) {
  const Experiment experiment = load_experiment(experiment_path, overrides);
  BothTimings out;
  out.plan = compile_plan(experiment);
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
  out.analytic = backend::make_backend("analytic")->evaluate(out.plan, inputs, experiment.sim, {}).timeline;
  out.simulated = backend::make_backend("sim")->evaluate(out.plan, inputs, experiment.sim, {});
  return out;
}

inline BothTimings decode_both_ways(const std::string& experiment_name, const std::vector<std::string>& overrides) {
  return decode_both_ways_at(std::string(WAFERSIM_TEST_DATA) + "/experiments/" + experiment_name + ".yaml", overrides);
}

// The same for the prefill of the experiment's prompt.
inline BothTimings prefill_both_ways(const std::string& experiment_name, const std::vector<std::string>& overrides) {
  const Experiment experiment =
      load_experiment(std::string(WAFERSIM_TEST_DATA) + "/experiments/" + experiment_name + ".yaml", overrides);
  BothTimings out;
  out.plan = mapping::compile_prefill_plan(compile_plan(experiment));
  const workloads::PrefillInputs inputs(out.plan.workload);  // the chunks the plan carries
  out.analytic = backend::make_backend("analytic")->evaluate(out.plan, inputs, experiment.sim, {}).timeline;
  out.simulated = backend::make_backend("sim")->evaluate(out.plan, inputs, experiment.sim, {});
  return out;
}

inline uint64_t last_exit(const mapping::DecodeTimeline& timeline) {
  uint64_t last = 0;
  for (uint64_t cycle : timeline.finish.back()) last = std::max(last, cycle);
  return last;
}

}  // namespace wafersim::testing

namespace wafersim::testing {

// With contention off the engine and the closed form agree to the cycle,
// region by region and iteration by iteration.
inline void require_same_cycles(mapping::Phase phase, const std::string& experiment,
                                std::vector<std::string> overrides) {
  overrides.push_back("sim.contention=false");
  const BothTimings both = phase == mapping::Phase::Prefill ? prefill_both_ways(experiment, overrides)
                                                            : decode_both_ways(experiment, overrides);
  const mapping::DecodeTimeline& simulated = both.simulated.timeline;
  REQUIRE(simulated.finish.size() == both.analytic.finish.size());
  for (size_t r = 0; r < both.analytic.finish.size(); ++r) {
    INFO("region " << both.plan.regions[r].name);
    CHECK(simulated.start[r] == both.analytic.start[r]);
    CHECK(simulated.finish[r] == both.analytic.finish[r]);
  }
  CHECK(simulated.critical_path == both.analytic.critical_path);
  CHECK(both.simulated.figures.tiles_simulated == both.plan.tiles_total);
}

// With contention on the engine is slower, but by less than 10 %.
inline void require_within_ten_percent(mapping::Phase phase, const std::string& experiment,
                                       std::vector<std::string> overrides) {
  overrides.push_back("sim.contention=true");
  const BothTimings both = phase == mapping::Phase::Prefill ? prefill_both_ways(experiment, overrides)
                                                            : decode_both_ways(experiment, overrides);
  const uint64_t simulated = last_exit(both.simulated.timeline), analytic = last_exit(both.analytic);
  INFO("simulated " << simulated << " cycles, analytic " << analytic << " cycles");
  CHECK(simulated >= analytic);
  CHECK(double(simulated) <= 1.10 * double(analytic));
  for (size_t n = 0; n < both.analytic.finish.back().size(); ++n)
    CHECK(both.simulated.timeline.finish.back()[n] >= both.analytic.finish.back()[n]);
}

}  // namespace wafersim::testing
