#pragma once
// What `wafersim` tells the shell, for every command.

namespace wafersim::reports {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitBadInput = 2,
  kExitDoesNotFit = 3,
  // A sweep whose scheduler ended some points without a result.
  kExitIncomplete = 4
};

}  // namespace wafersim::reports
