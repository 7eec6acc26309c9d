#include "sim/reports/compile.h"

#include "mapping/does_not_fit.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

nlohmann::json does_not_fit_record(const std::string& message, const Experiment& experiment) {
  return {{"fits", false}, {"error", message}, {"config_hash", experiment.config.hash()}, {"version", version()}};
}

mapping::Plan compile_or_record_refusal(const Experiment& experiment, const std::string& json_path) {
  try {
    return compile_plan(experiment);
  } catch (const mapping::DoesNotFitError& error) {
    if (!json_path.empty()) write_json(json_path, does_not_fit_record(error.what(), experiment));
    throw;
  }
}

}  // namespace wafersim::reports
