#include "sim/cli/commands.h"

namespace wafersim::cli {

void add_validate_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand("validate", "(not available yet)");
  command->allow_extras();
  command->callback([] { throw CommandError(2, "'wafersim validate' is not available in this version yet"); });
}

}  // namespace wafersim::cli
