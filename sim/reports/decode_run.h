#pragma once
// An experiment's decode through a backend, as `run`, `analytic`, `serve
// --backend` and the Python module all evaluate it: the prefill (when the
// workload asks for one; the engine runs it in a child process), then the
// decode (or its speculative steps) in this process, and the metrics of both.
#include <optional>
#include <utility>

#include "mapping/plan.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"
#include "sim/reports/speculative_decode.h"

namespace wafersim::reports {

struct DecodeRun {
  backend::Evaluation evaluation;  // the decode's (the verify pass's, speculating); figures cover the prefill too
  DecodeMetrics metrics;           // with metrics.prefill when there was one
  std::optional<std::pair<mapping::Plan, backend::Evaluation>> prefill;
  std::optional<SpeculativeEvaluation> speculative;
};

// The hardware drawing static power while `plan` runs: every row of the
// experiment's wafers, also when the plan holds only some of them.
HardwareSpec whole_system(const Experiment& experiment, const mapping::Plan& plan);

// `plan` is compile_plan(experiment). `options` are the decode's (the prefill
// runs with experiment.sim). The wall time and peak memory are left to the caller.
DecodeRun run_decode(const Experiment& experiment, const mapping::Plan& plan, const backend::Backend& backend,
                     const SimOptions& options, const backend::ProgressFn& progress);

}  // namespace wafersim::reports
