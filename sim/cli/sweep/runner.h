#pragma once
// Runs sweep points as child processes of the wafersim binary, a fixed number
// at a time, with a progress line, and stops cleanly on SIGINT or SIGTERM.
#include <functional>
#include <string>
#include <vector>

#include "sim/cli/sweep/results.h"

namespace wafersim::cli::sweep {

struct Job {
  std::vector<std::string> arguments;  // after the program name: {"analytic", "p.yaml", "--json", ...}
  std::string json_path;               // where the run writes its --json document
  std::string stderr_path;             // where its stderr goes (its one-line error)
  std::string label;                   // "point 3 (workload.batch=4)", for messages
};

struct RunnerOptions {
  unsigned jobs = 1;
  size_t total = 0;                  // points in the sweep, counting those already finished
  size_t done = 0;                   // of which finished before this run
  bool show_progress = true;         // the progress line and one line per point that fails, on stderr
  double point_timeout_seconds = 0;  // a run still going after this long is killed and recorded as timed out; 0 = never
};

struct RunnerSummary {
  size_t ok = 0, does_not_fit = 0, failed = 0;
  bool interrupted = false;
};

// Runs every job; `finished(index, outcome)` is called in this process as each
// one ends. A job whose run was stopped by a signal to stop is not reported:
// it runs again when the sweep resumes.
RunnerSummary run_jobs(const std::vector<Job>& jobs, const RunnerOptions& options,
                       const std::function<void(size_t, const PointOutcome&)>& finished);

}  // namespace wafersim::cli::sweep
