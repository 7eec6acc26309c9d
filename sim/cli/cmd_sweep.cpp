#include "sim/cli/commands.h"

namespace wafersim::cli {

void add_sweep_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("sweep", "(not available yet)");
  command->allow_extras();
  command->callback([] { throw CommandError(2, "'wafersim sweep' is not available in this version yet"); });
}

}  // namespace wafersim::cli
