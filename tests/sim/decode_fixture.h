#pragma once
// One decode experiment through both timing paths: the engine and the analytic model.
#include <string>
#include <vector>

#include "mapping/decode_inputs.h"
#include "mapping/experiment.h"
#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/engine/decode.h"

namespace wafersim::testing {

struct BothTimings {
  mapping::Plan plan;
  mapping::DecodeTimeline analytic;
  sim::DecodeRun simulated;
};

inline BothTimings decode_both_ways(const std::string& experiment_name, const std::vector<std::string>& overrides) {
  const mapping::Experiment experiment = mapping::load_experiment(
      std::string(WAFERSIM_TEST_DATA) + "/experiments/" + experiment_name + ".yaml", overrides);
  BothTimings out;
  out.plan = mapping::compile_plan(experiment);
  const mapping::DecodeInputs inputs(experiment.model, experiment.workload);
  out.analytic = mapping::analytic_timeline(out.plan, inputs);
  sim::EngineOptions options;
  options.contention = experiment.sim.contention;
  out.simulated = sim::simulate_decode(out.plan, inputs, options);
  return out;
}

inline uint64_t last_exit(const mapping::DecodeTimeline& timeline) {
  uint64_t last = 0;
  for (uint64_t cycle : timeline.finish.back()) last = std::max(last, cycle);
  return last;
}

}  // namespace wafersim::testing
