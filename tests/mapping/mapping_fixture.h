#pragma once
// Loads a test experiment and compiles it.
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/experiment/experiment.h"
#include "workloads/decode_inputs.h"

namespace wafersim::testing {

inline std::string experiment_path(const std::string& name) {
  return std::string(WAFERSIM_TEST_DATA) + "/experiments/" + name + ".yaml";
}

// A zoo model on a hardware preset, as an experiment file's text.
inline std::string zoo_experiment(const std::string& model, const std::string& hardware, uint64_t prompt_tokens = 1024,
                                  uint64_t decode_tokens = 8) {
  return "hardware: " + hardware + "\nmodel: " + model +
         "\nworkload:\n  prompt_tokens: " + std::to_string(prompt_tokens) +
         "\n  decode_tokens: " + std::to_string(decode_tokens) + "\n";
}

inline mapping::Plan compile(const Experiment& experiment) { return compile_plan(experiment); }

// Every tile's tasks of one step of `block`, for the iteration's tokens, in tile order.
inline std::vector<Task> step_tasks(const mapping::Block& block, const mapping::Step& step) {
  std::vector<Task> tasks;
  for (uint32_t i = 0; i < block.geo.rows; ++i)
    for (uint32_t j = 0; j < block.geo.cols; ++j) step.emit_tokens(i, j, tasks);
  return tasks;
}

// An experiment's plan and its closed-form decode timeline.
struct Decoded {
  mapping::Plan plan;
  mapping::DecodeTimeline timeline;
};
inline Decoded decode_text(const std::string& text, const std::vector<std::string>& overrides) {
  const Experiment experiment = load_experiment_text(text, "decoded.yaml", overrides);
  Decoded out{compile(experiment), {}};
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
  out.timeline = mapping::analytic_timeline(out.plan, inputs);
  return out;
}

}  // namespace wafersim::testing
