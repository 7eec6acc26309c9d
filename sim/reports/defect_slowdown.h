#pragma once
// What a repaired wafer's detours cost the decode: the closed form of the
// experiment's plan against the closed form of the same experiment on a
// perfect wafer (docs/DEFECTS.md). The logical grid is the preset's either
// way, so the compiler places the same plan; only the detours differ.
#include "mapping/plan.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"

namespace wafersim::reports {

// `decode` is what `backend` measured for `plan`; when the backend is the
// closed form its total is reused, otherwise the closed form is evaluated.
DefectSlowdown defect_slowdown(const Experiment& experiment, const mapping::Plan& plan, const backend::Backend& backend,
                               const DecodeMetrics& decode, const IterationInputs& inputs);
// The same with speculative decoding: the draft's and the verify pass's closed
// forms through the step schedule (speculative_decode.h), on this wafer and on
// a perfect one.
DefectSlowdown speculative_defect_slowdown(const Experiment& experiment, const mapping::Plan& target,
                                           const backend::Backend& backend, const DecodeMetrics& decode);

}  // namespace wafersim::reports
