#pragma once
// Compiling an experiment for a command. run, analytic and map share what a
// plan that does not fit leaves behind: with --json FILE, one refused record
// of the same shape, then exit 3 with the one-line message on stderr.
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"

namespace wafersim::reports {

// {"fits": false, "error": message, "config_hash": ..., "version": ...}
nlohmann::json does_not_fit_record(const std::string& message, const Experiment& experiment);

// compile_plan(experiment); when the model does not fit, writes does_not_fit_record
// to `json_path` (the --json destination; none when empty) and rethrows the mapping::DoesNotFitError.
mapping::Plan compile_or_record_refusal(const Experiment& experiment, const std::string& json_path);

}  // namespace wafersim::reports
