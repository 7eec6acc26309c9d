#include <filesystem>
#include <iostream>
#include <memory>

#include <yaml-cpp/yaml.h>

#include "models/config/source_text.h"
#include "sim/cli/commands.h"
#include "sim/cli/sweep/points.h"
#include "sim/cli/sweep/sweep_file.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"

namespace wafersim::cli {

namespace {

struct ValidateOptions {
  std::string file;
  bool print = false;
  CommonOptions common;
};

// A sweep file has a `base` (an experiment file has sections only).
bool is_sweep_file(const std::string& path) {
  std::error_code error;
  if (path == "-" || !std::filesystem::is_regular_file(path, error)) return false;
  try {
    const YAML::Node root = YAML::Load(config::read_config_file(path));  // size-checked
    return root.IsMap() && (root["base"] || root["axes"]);
  } catch (const std::exception&) {
    return false;  // the experiment loader reports what is wrong with it
  }
}

// A sweep file is valid when every one of its points is (as `sweep --dry-run` checks).
void validate_sweep(const ValidateOptions& options) {
  if (!options.common.sets.empty())
    throw CommandError(kExitBadInput, "--set does not apply to a sweep file (" + options.file +
                                          "); give the value as an axis or in its base");
  const sweep::SweepFile file = sweep::load_sweep_file(options.file);
  const sweep::SweepPlan plan = sweep::plan_points(file);
  if (!options.common.quiet)
    options.common.table_out() << options.file << ": ok, a sweep of " << plan.points.size()
                               << " point(s), every one valid (engine " << file.engine
                               << "; wafersim sweep FILE --dry-run lists them)\n";
  if (!options.common.json_path.empty())
    write_json(options.common.json_path, {{"file", options.file},
                                          {"valid", true},
                                          {"sweep", true},
                                          {"points", plan.points.size()},
                                          {"engine", file.engine},
                                          {"version", version()}});
}

void validate(const ValidateOptions& options) {
  if (is_sweep_file(options.file)) return validate_sweep(options);
  const config::Config config = load_experiment_config(options.file, options.common.sets);
  // The typed specs' cross-field checks and every other check run, analytic and serve make before compiling.
  check_experiment(config);

  const std::string name = options.file == "-" ? kStdinName : options.file;
  const std::string verdict = name + ": ok (config hash " + config.hash() + ")";
  if (options.print)
    options.common.table_out() << "# " << verdict << "\n" << config.to_yaml();
  else if (!options.common.quiet)
    options.common.table_out() << verdict << "\n";
  if (!options.common.json_path.empty()) write_json(options.common.json_path, validate_document(config, name));
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command =
      app.add_subcommand("validate",
                         "Check an experiment file as run, analytic and serve check their input before compiling; "
                         "--print shows the resolved configuration");
  command->add_option("FILE", options->file, "Experiment YAML file ('-' = standard input)")->required();
  command->add_flag("--print", options->print, "Print the resolved configuration as YAML");
  add_common_options(*command, options->common);
  command->callback([options] { validate(*options); });
}

}  // namespace wafersim::cli
