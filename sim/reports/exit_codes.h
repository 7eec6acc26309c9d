#pragma once
// What `wafersim` tells the shell, for every command: the README's list of
// exit codes is this one.

namespace wafersim::reports {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  // sim.functional: the plan's numbers diverge from the reference. It shares 1
  // with an internal error: the plan computes something wrong.
  kExitNumbersDiverge = 1,
  kExitBadInput = 2,
  kExitDoesNotFit = 3,
  // A sweep whose scheduler ended some points without a result.
  kExitIncomplete = 4,
  // Recorded for a sweep point stopped by --point-timeout, as timeout(1) exits.
  kExitTimedOut = 124,
  // A child program (a sweep point, a job's command) could not be started, as a shell says.
  kExitNotStarted = 127,
  // Stopped by a signal (SIGINT or SIGTERM) before it finished, as a shell says of 128 + SIGINT.
  kExitInterrupted = 130
};

}  // namespace wafersim::reports
