#pragma once
// One point of a sweep folder, run the way every backend runs it: the
// engine's wafersim command in a child process, its record written to
// DIR/points/<hash>.json atomically. The local runner runs many such jobs at
// once; a Slurm array task or a line of --emit-jobs runs one
// (`wafersim sweep-point DIR HASH`), reading what it needs from DIR/plan.json.
#include <string>

#include "sim/cli/sweep/points.h"
#include "sim/cli/sweep/results.h"
#include "sim/cli/sweep/runner.h"

namespace wafersim::cli::sweep {

// DIR/plan.json: the engine, the columns and each point's hash and cells, so
// that a point's task needs neither the sweep file nor its presets.
void write_plan_file(const std::string& out_dir, const SweepPlan& plan, const std::string& engine);

struct FolderPlan {
  std::string engine;
  SweepPlan plan;  // points carry cells and hash; their yaml is in DIR/points/<hash>.yaml
};
// CommandError (exit code 2) naming the file when it is missing or damaged.
FolderPlan read_plan_file(const std::string& out_dir);

// The job that runs `point` with `engine`, its temporary files in `points_dir`.
Job point_job(const std::string& points_dir, const Point& point, const std::string& engine, const std::string& label);

// Writes the point's record; returns it.
nlohmann::json write_point_record(const std::string& points_dir, const SweepPlan& plan, const Point& point,
                                  const std::string& engine, const PointOutcome& outcome);

// Runs the point `hash` of the sweep folder `out_dir` in this process, unless
// it already has a record of the folder's engine or another process runs it
// now (DIR/points/<hash>.lock, held with flock while it runs). Prints one line
// saying what it did. Returns the exit code: 0 when the point ran or was
// skipped, 130 when stopped by a signal (no record: it runs again).
int run_point_task(const std::string& out_dir, const std::string& hash);

}  // namespace wafersim::cli::sweep
