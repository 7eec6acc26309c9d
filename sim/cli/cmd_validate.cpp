#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/cli/output.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/version.h"

namespace wafersim::cli {

namespace {

struct ValidateOptions {
  std::string file;
  bool print = false;
  CommonOptions common;
};

void validate(const ValidateOptions& options) {
  const config::Config config = load_experiment_config(options.file, options.common.sets);
  // Building the typed specs runs the cross-field checks.
  experiment_from_config(config);

  const std::string name = options.file == "-" ? kStdinName : options.file;
  const std::string verdict = name + ": ok (config hash " + config.hash() + ")";
  if (options.print)
    options.common.table_out() << "# " << verdict << "\n" << config.to_yaml();
  else if (!options.common.quiet)
    options.common.table_out() << verdict << "\n";
  if (!options.common.json_path.empty())
    write_json(options.common.json_path,
               {{"file", name}, {"valid", true}, {"config_hash", config.hash()}, {"version", version()}});
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command =
      app.add_subcommand("validate", "Check an experiment file; --print shows the resolved configuration");
  command->add_option("FILE", options->file, "Experiment YAML file ('-' = standard input)")->required();
  command->add_flag("--print", options->print, "Print the resolved configuration as YAML");
  add_common_options(*command, options->common);
  command->callback([options] { validate(*options); });
}

}  // namespace wafersim::cli
