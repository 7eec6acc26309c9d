#include "sim/cli/compile.h"

#include "mapping/does_not_fit.h"
#include "sim/cli/output.h"
#include "sim/experiment/version.h"

namespace wafersim::cli {

nlohmann::json does_not_fit_record(const std::string& message, const Experiment& experiment) {
  return {{"fits", false}, {"error", message}, {"config_hash", experiment.config.hash()}, {"version", version()}};
}

mapping::Plan compile_or_record_refusal(const Experiment& experiment, const CommonOptions& options) {
  try {
    return compile_plan(experiment);
  } catch (const mapping::DoesNotFitError& error) {
    if (!options.json_path.empty()) write_json(options.json_path, does_not_fit_record(error.what(), experiment));
    throw;
  }
}

}  // namespace wafersim::cli
