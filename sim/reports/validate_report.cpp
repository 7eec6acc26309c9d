// What `wafersim validate` checks, and what its --json writes for a configuration that passes.
#include "sim/experiment/version.h"
#include "sim/reports/functional_check.h"
#include "sim/reports/reports.h"
#include "sim/reports/serve_report.h"

namespace wafersim::reports {

namespace {

// A file meant for serve gives some serving.* value (a section left out is serve's defaults alone).
bool gives_serving(const config::Config& config) {
  for (const auto& [path, entry] : config.entries())
    if (path.rfind("serving.", 0) == 0 && !entry.from_default) return true;
  return false;
}

}  // namespace

Experiment check_experiment(const config::Config& config) {
  Experiment experiment = experiment_from_config(config);
  refuse_impossible_functional_check(experiment);
  if (gives_serving(config)) serving_requests(experiment);
  return experiment;
}

nlohmann::json validate_document(const config::Config& config, const std::string& name) {
  return {{"file", name}, {"valid", true}, {"config_hash", config.hash()}, {"version", version()}};
}

}  // namespace wafersim::reports
