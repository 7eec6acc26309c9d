#include "sim/cli/commands.h"

namespace wafersim::cli {

void add_describe_model_subcommand(CLI::App& describe) {
  CLI::App* command = describe.add_subcommand("model", "(not available yet)");
  command->allow_extras();
  command->callback([] { throw CommandError(2, "'wafersim describe model' is not available in this version yet"); });
}

}  // namespace wafersim::cli
