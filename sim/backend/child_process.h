#pragma once
// Runs an evaluation in a forked child process and reads its result back: how
// a command runs a second SystemC simulation (SystemC elaborates once per process).
#include <functional>
#include <memory>
#include <string>

#include "sim/backend/backend.h"

namespace wafersim::backend {

// What a forked child sent back and how it ended.
struct ChildOutput {
  std::string text;      // everything the child wrote before it ended
  int exit_status = 0;   // when it exited
  int signal = 0;        // when a signal ended it (0: it exited)
  bool stopped = false;  // `stop` said so: the child was killed and reaped, `text` is partial
};

// Forks; the child runs `work`, writes the text it returns to the parent and
// leaves with _exit(its exit status), running no destructor or atexit handler
// of the parent's. The child dies with its parent however the parent dies
// (PR_SET_PDEATHSIG). Throws std::runtime_error when no child can be started.
//
// While it waits, the parent asks `stop` (when given) every kStopPollMilliseconds
// and whenever a signal interrupts the wait; when it returns true, the child
// is killed with SIGKILL (its own children die with it) and reaped before
// this returns, with ChildOutput::stopped set. How a caller that runs
// signal handlers of its own (Python's) stops a run within a fraction of a second.
inline constexpr int kStopPollMilliseconds = 100;
ChildOutput run_in_forked_child(const std::function<std::pair<std::string, int>()>& work,
                                const std::function<bool()>& stop = {});

// The same in two halves: the constructor forks (the child runs `work`), and
// the parent goes on with its own work until wait(). A child never waited for
// (the parent's work threw) is killed and reaped by the destructor.
class ForkedChild {
 public:
  explicit ForkedChild(const std::function<std::pair<std::string, int>()>& work);
  ~ForkedChild();
  ForkedChild(const ForkedChild&) = delete;
  ForkedChild& operator=(const ForkedChild&) = delete;
  ChildOutput wait(const std::function<bool()>& stop = {});

 private:
  int pid_ = -1;
  int read_fd_ = -1;  // the pipe the child writes its text into
};

// Forks, calls `evaluate` in the child and returns what it returned. An
// exception in the child is rethrown here with its message: as CycleLimitError
// when it was one, else as std::runtime_error; a child killed by a signal is
// reported as such.
Evaluation evaluate_in_forked_child(const std::function<Evaluation()>& evaluate);
// The same, collected later (Backend::start_in_child).
std::unique_ptr<PendingEvaluation> start_in_forked_child(const std::function<Evaluation()>& evaluate);

}  // namespace wafersim::backend
