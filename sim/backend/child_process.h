#pragma once
// Runs an evaluation in a forked child process and reads its result back: how
// a command runs a second SystemC simulation (SystemC elaborates once per process).
#include <functional>

#include "sim/backend/backend.h"

namespace wafersim::backend {

// Forks, calls `evaluate` in the child and returns what it returned. An
// exception in the child is rethrown here with its message: as CycleLimitError
// when it was one, else as std::runtime_error; a child killed by a signal is
// reported as such.
Evaluation evaluate_in_forked_child(const std::function<Evaluation()>& evaluate);

}  // namespace wafersim::backend
