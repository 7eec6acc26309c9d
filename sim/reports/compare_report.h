#pragma once
// `compare`: an experiment's closed form on the wafer (the path `analytic`
// takes: run_decode through the analytic backend) beside the GPU reference
// (sim/gpu_reference/) of the same model and workload.
#include <optional>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "models/gpu.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/gpu_reference/gpu_reference.h"
#include "sim/reports/reports.h"

namespace wafersim::reports {

// The GPU reference of the experiment's model and workload. A model the GPUs
// cannot hold throws mapping::DoesNotFitError (exit 3), naming the GPUs.
gpu_reference::Result gpu_reference_of(const Experiment& experiment, const GpuSystem& system);

// Evaluates the plan in closed form (as `analytic`) and reports it beside `gpu`.
Report compare_report(const Experiment& experiment, const mapping::Plan& plan, const gpu_reference::Result& gpu,
                      const backend::ProgressFn& progress);

}  // namespace wafersim::reports
