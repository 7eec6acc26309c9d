#pragma once
// The decode of `run` and `analytic` with speculative decoding: the draft's
// plan timed for k tokens of every sequence, the target's verify plan for one
// pass of every sequence, both through the command's backend, and the step
// schedule that the acceptance draws make of them (speculative_metrics.h).
#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"

namespace wafersim::reports {

struct SpeculativeEvaluation {
  mapping::Plan draft;                 // on the rows the target leaves, timed for k tokens per sequence
  mapping::Plan verify;                // the target's plan over k + 1 positions per iteration
  backend::Evaluation verify_run;      // its timeline and the backend's figures (draft's events added)
  DecodeMetrics metrics;               // with metrics.speculative
  mapping::DecodeTimeline first_step;  // per sequence, the end of its first step (time to first token)
};

// `target` is compile_plan(experiment): the target on its band of rows.
// The engine times the draft in a child process and the verify pass here.
SpeculativeEvaluation evaluate_speculative(const Experiment& experiment, const mapping::Plan& target,
                                           const backend::Backend& backend, const SimOptions& options,
                                           const backend::ProgressFn& progress);

}  // namespace wafersim::reports
