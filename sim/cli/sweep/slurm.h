#pragma once
// The Slurm backend of a sweep: one job array per submission over the points
// not yet done, each task running `wafersim sweep-point DIR --list FILE`, and
// what the scheduler says about those tasks. Assumes DIR and the wafersim
// binary are at the same path on every node (a shared file system).
#include <map>
#include <string>
#include <vector>

namespace wafersim::cli::sweep {

struct SlurmOptions {
  std::string partition;                // --partition; "" = the cluster's default
  std::string time_limit;               // --time per task; "" = the partition's default
  std::string memory;                   // --mem per task; "" = the cluster's default
  unsigned max_parallel = 0;            // tasks running at once (--array=...%N); 0 = no limit
  std::vector<std::string> extra_args;  // --sbatch-arg, passed through last
};

// One sbatch call: task i runs the point hashes[i], listed in DIR/slurm/<name>.points.
struct Submission {
  std::string job_id;
  std::string list_file;
  std::vector<std::string> hashes;
};

// Submits an array over `hashes` (absolute `out_dir`); records it in
// DIR/slurm/submissions.txt. CommandError (exit code 2) with sbatch's message
// when sbatch refuses or is missing.
Submission submit_array(const std::string& out_dir, const std::vector<std::string>& hashes,
                        const SlurmOptions& options);

// Every submission recorded in DIR/slurm/submissions.txt, oldest first.
std::vector<Submission> read_submissions(const std::string& out_dir);

// A task as the scheduler reports it.
struct TaskState {
  std::string state;  // PENDING, RUNNING, COMPLETED, TIMEOUT, CANCELLED, OUT_OF_MEMORY, FAILED, ...
  std::string task;   // "<job>_<index>"
};

// The scheduler's state of each submitted point's latest task, by point hash:
// squeue (which keeps ended jobs for the cluster's MinJobAge), then sacct for
// jobs squeue no longer knows. A point neither knows is absent.
std::map<std::string, TaskState> task_states(const std::vector<Submission>& submissions);

// Tasks of `submission` not yet ended (pending, running, completing, ...),
// from squeue. Throws CommandError when squeue fails for another reason than
// not knowing the job (which means it ended long ago).
size_t unfinished_tasks(const Submission& submission, size_t* running = nullptr);

// True for the states of a task that has not ended.
bool is_unfinished_state(const std::string& state);

}  // namespace wafersim::cli::sweep
