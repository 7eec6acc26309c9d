#pragma once
// Runs a serving experiment given as YAML text through the serving library:
// the plan compiled for serving, its step costs, the loop and the metrics.
#include <memory>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"
#include "sim/serving/serving_metrics.h"
#include "sim/serving/serving_sim.h"
#include "sim/serving/step_costs.h"
#include "workloads/serving/request_stream.h"

namespace wafersim::testing {

// tiny-dense on the tiny wafer, prompt chunks of 32 tokens; `serving` is the
// body of the serving section, indented by two spaces.
inline std::string tiny_serving(const std::string& serving) {
  return "hardware: tiny\nmodel: tiny-dense\nworkload: {prompt_tokens: 64, decode_tokens: 16, "
         "prefill_chunk_tokens: 32}\nserving:\n" +
         serving;
}

struct Served {
  Experiment experiment;
  std::unique_ptr<mapping::Plan> plan, prefill;
  std::unique_ptr<serving::StepCosts> costs;
  workloads::ServingSpec spec;
  serving::ServingRun run;
  serving::ServingMetrics metrics;
};

inline Served serve_text(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  Served s{load_experiment_text(yaml, "serve.yaml", overrides), nullptr, nullptr, nullptr, {}, {}, {}};
  s.spec = workloads::serving_from_config(s.experiment.config, s.experiment.model);
  const workloads::RequestStream stream = workloads::request_stream(s.spec, s.experiment.model.max_positions);
  Experiment compiled = s.experiment;
  compiled.workload = workloads::serving_plan_workload(s.experiment.workload);
  s.plan = std::make_unique<mapping::Plan>(compile_plan(compiled));
  s.prefill = std::make_unique<mapping::Plan>(mapping::compile_prefill_plan(*s.plan));
  s.costs = std::make_unique<serving::StepCosts>(*s.plan, *s.prefill, s.plan->workload.seed);
  s.run = serving::simulate_serving(s.spec, stream, *s.costs, s.plan->max_context_tokens, s.plan->hw.clock_ghz);
  s.metrics = serving::serving_metrics(s.spec, s.run);
  return s;
}

}  // namespace wafersim::testing
