#include "sim/cli/commands.h"

namespace wafersim::cli {

void add_describe_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("describe", "(not available yet)");
  command->allow_extras();
  command->callback([] { throw CommandError(2, "'wafersim describe' is not available in this version yet"); });
}

}  // namespace wafersim::cli
