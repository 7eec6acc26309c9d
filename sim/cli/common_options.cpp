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
  command.add_option("CONFIG", options.file,
                     "Experiment YAML file ('-' = standard input; none = the built-in default, "
                     "workloads/experiments/quickstart.yaml)");
  add_common_options(command, options.common);
}

void add_trace_options(CLI::App& command, TraceOptions& options) {
  CLI::Option* trace =
      command
          .add_option("--trace", options.path,
                      "Write the timeline (prefill, then decode) to FILE as a Chrome JSON trace for the Perfetto UI")
          ->check([](const std::string& path) {
            return path.empty() || path == "-" ? std::string("needs a file name, got '" + path + "'") : "";
          });
  command
      .add_option_function<std::string>(
          "--trace-tokens",
          [&options](const std::string& text) {
            // The check below has already refused what does not parse.
            parse_trace_window(text, options.window);
          },
          "Trace only decode iterations A to B - 1 (A:B; either side may be empty)")
      ->check([](const std::string& text) {
        TraceWindow ignored;
        return parse_trace_window(text, ignored);
      })
      ->needs(trace);
}

void add_folder_option(CLI::App& command, const std::string& flag, std::string& folder,
                       const std::string& description) {
  command.add_option(flag, folder, description)->check([](const std::string& path) {
    return path.empty() ? std::string("needs a folder name, got an empty one") : "";
  });
}

}  // namespace wafersim::cli
