#include "sim/cli/commands.h"

namespace wafersim::cli {

void add_common_options(CLI::App& command, CommonOptions& options) {
  command.add_option("--set", options.sets, "Override a parameter after loading: a.b.c=value (repeatable)");
  command.add_option("--json", options.json_path, "Write machine-readable results to FILE ('-' = stdout)")
      ->check([](const std::string& path) {
        return path.empty() ? std::string("needs a file name, got an empty one") : "";
      });
  command.add_flag("--quiet", options.quiet, "No progress line and no table");
}

void add_experiment_options(CLI::App& command, ExperimentOptions& options) {
  command.add_option("CONFIG", options.file, "Experiment YAML file ('-' = standard input)")->required();
  add_common_options(command, options.common);
}

}  // namespace wafersim::cli
