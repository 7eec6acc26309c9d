#pragma once
// One decode (or prefill) experiment through both backends: the engine and the closed form.
#include <algorithm>
#include <string>
#include <vector>

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

inline BothTimings decode_both_ways(const std::string& experiment_name, const std::vector<std::string>& overrides) {
  const Experiment experiment =
      load_experiment(std::string(WAFERSIM_TEST_DATA) + "/experiments/" + experiment_name + ".yaml", overrides);
  BothTimings out;
  out.plan = compile_plan(experiment);
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
  out.analytic = backend::make_backend("analytic")->evaluate(out.plan, inputs, experiment.sim, {}).timeline;
  out.simulated = backend::make_backend("sim")->evaluate(out.plan, inputs, experiment.sim, {});
  return out;
}

// The same for the prefill of the experiment's prompt.
inline BothTimings prefill_both_ways(const std::string& experiment_name, const std::vector<std::string>& overrides) {
  const Experiment experiment =
      load_experiment(std::string(WAFERSIM_TEST_DATA) + "/experiments/" + experiment_name + ".yaml", overrides);
  BothTimings out;
  out.plan = mapping::compile_prefill_plan(compile_plan(experiment));
  const workloads::PrefillInputs inputs(experiment.workload);
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
