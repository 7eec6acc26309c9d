#pragma once
// Evaluates the points a search asks for with the sweep's machinery
// (sim/cli/sweep): each point is written as a complete experiment into
// FOLDER/points/<hash>.yaml, validated as `run` loads it, run by its engine's
// command in a process of its own (as many at once as --jobs says) or as a
// Slurm job array, and recorded in FOLDER/points/<hash>.json. A point already
// recorded (this search, or an earlier one resumed) is not run again.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/search/search_space.h"
#include "sim/cli/sweep/points.h"
#include "sim/cli/sweep/slurm.h"
#include "sim/cli/sweep/sweep_file.h"

namespace wafersim::cli::search {

// A point of the search space: per axis, the index of its value, or
// kBaseValue for the experiment's own value (the default plan has every axis so).
constexpr int kBaseValue = -1;
using Choice = std::vector<int>;

struct Evaluated {
  Choice choice;
  sweep::Point point;     // cells: each axis's value as the point runs it
  nlohmann::json record;  // the sweep's point record: status (ok, does_not_fit, failed, or invalid: values
                          // that do not combine, not run), error, result
  size_t round = 0;       // the batch of points it was evaluated in, from 1
};

struct RunSettings {
  std::string folder;
  std::string engine = "analytic";
  unsigned jobs = 1;
  bool resume = false;            // reuse the records already in the folder
  std::string backend = "local";  // local | slurm
  sweep::SlurmOptions slurm;
  double point_timeout_seconds = 0;
};

class Evaluator {
 public:
  // `fixed` values (path, YAML text) go into the base of every point (the
  // search leaves out the prefill when nothing it ranks needs it). Creates
  // FOLDER/points; refuses a folder holding results unless resuming.
  Evaluator(const std::string& experiment_file, std::vector<VaryAxis> axes,
            const std::vector<std::pair<std::string, std::string>>& fixed, RunSettings settings);

  // The records of `choices`, in order, evaluating those not evaluated yet as
  // one batch (a round). CommandError with exit code 130 when interrupted.
  std::vector<const Evaluated*> evaluate(const std::vector<Choice>& choices);

  // Checks every value of every axis on its own against the experiment
  // schema, before anything runs (ConfigError naming the --vary argument).
  void check_values();

  // Runs the given points again with `engine` (the engine: --verify) into
  // FOLDER/verify/points, on this machine; their records, in order.
  std::vector<nlohmann::json> rerun(const std::vector<const Evaluated*>& points, const std::string& engine) const;

  const std::vector<Evaluated>& evaluated() const { return evaluated_; }
  const std::vector<VaryAxis>& axes() const { return axes_; }
  // The experiment of `choice` as the user runs it: without the fixed values.
  std::string experiment_yaml(const Choice& choice) const;
  size_t rounds() const { return rounds_; }

 private:
  sweep::Point plan_point(const Choice& choice) const;
  // The point, or nullopt when its values do not combine (listed as invalid).
  std::optional<sweep::Point> plan_point_or_refusal(const Choice& choice);
  void run(const std::vector<size_t>& indices);
  void run_on_slurm(const std::vector<size_t>& indices);

  YAML::Node experiment_;   // the experiment file, section file names made absolute
  sweep::SweepFile sweep_;  // the experiment with the fixed values as a sweep's base, one column per axis
  std::vector<VaryAxis> axes_;
  std::vector<sweep::Setting> fixed_;
  RunSettings settings_;
  std::string points_dir_;
  sweep::SweepPlan plan_;  // every point so far, for FOLDER/plan.json (what a Slurm task reads)
  std::vector<Evaluated> evaluated_;
  size_t rounds_ = 0;
};

}  // namespace wafersim::cli::search
