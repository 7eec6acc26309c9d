#include "sim/cli/search/evaluator.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "models/config/source_text.h"
#include "models/config/text.h"
#include "sim/cli/sweep/point_task.h"
#include "sim/cli/sweep/results.h"
#include "sim/cli/sweep/runner.h"
#include "sim/cli/sweep/temporary_files.h"
#include "sim/cli/sweep/yaml_tree.h"
#include "sim/reports/command_error.h"
#include "sim/reports/exit_codes.h"
#include "sim/reports/output.h"

namespace wafersim::cli::search {

using reports::CommandError;
using reports::kExitBadInput;
using reports::kExitInterrupted;
using reports::write_text_atomically;

namespace {

// A record the folder may keep: of this engine, and not of a run killed from
// outside (which --resume runs again, as a sweep does).
bool reusable(const std::optional<nlohmann::json>& record, const std::string& engine) {
  if (!record || (*record)["engine"] != engine) return false;
  return !((*record)["status"] == "failed" && record->value("exit_code", 0) > 128);
}

std::string label(const sweep::SweepPlan& plan, const sweep::Point& point, size_t number) {
  std::vector<std::string> values;
  for (size_t c = 0; c < plan.columns.size(); ++c) values.push_back(plan.columns[c] + "=" + point.cells[c]);
  return fmt::format("point {} ({})", number, config::join(values));
}

void prepare_points_folder(const std::string& points_dir, bool resume, const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(points_dir, error);
  if (error) throw CommandError(kExitBadInput, "cannot create " + points_dir + ": " + error.message());
  if (std::filesystem::is_symlink(points_dir))
    throw CommandError(kExitBadInput, "cannot write " + points_dir + ": it is a symbolic link, not a folder");
  if (!resume)
    for (const auto& entry : std::filesystem::directory_iterator(points_dir))
      if (entry.path().extension() == ".json")
        throw CommandError(kExitBadInput, folder +
                                              " already holds search results; pass --resume to continue (points "
                                              "already run are reused), or choose another -o");
  sweep::remove_temporary_files(points_dir);
}

// Runs `points` with `settings.engine` on this machine, each record written
// into `points_dir` as it finishes and handed to `finished`.
void run_locally(const sweep::SweepPlan& plan, const std::vector<const sweep::Point*>& points,
                 const std::string& points_dir, const RunSettings& settings, size_t total,
                 const std::function<void(size_t, nlohmann::json)>& finished) {
  std::vector<sweep::Job> jobs;
  for (size_t i = 0; i < points.size(); ++i)
    jobs.push_back(sweep::point_job(points_dir, *points[i], settings.engine,
                                    label(plan, *points[i], total - points.size() + i + 1)));
  sweep::RunnerOptions options;
  options.jobs = settings.jobs;
  options.total = total;
  options.done = total - points.size();
  options.point_timeout_seconds = settings.point_timeout_seconds;
  const sweep::RunnerSummary summary =
      sweep::run_jobs(jobs, options, [&](size_t job, const sweep::PointOutcome& outcome) {
        finished(job, sweep::write_point_record(points_dir, plan, *points[job], settings.engine, outcome));
      });
  sweep::remove_temporary_files(points_dir);
  if (summary.interrupted)
    throw CommandError(kExitInterrupted,
                       "search interrupted; continue it with the same command and --resume "
                       "(the points already run are kept)");
}

}  // namespace

Evaluator::Evaluator(const std::string& experiment_file, std::vector<VaryAxis> axes,
                     const std::vector<std::pair<std::string, std::string>>& fixed, RunSettings settings)
    : axes_(std::move(axes)), settings_(std::move(settings)) {
  const std::string folder = std::filesystem::path(experiment_file).parent_path().string();
  sweep_.path = experiment_file;
  sweep_.base_file = experiment_file;
  sweep_.base_where = {experiment_file, 1, 0};
  sweep_.base_source = config::parse_config_text(config::read_config_file(experiment_file), experiment_file);
  if (!sweep_.base_source.IsMap())
    throw config::ConfigError(sweep_.base_where, "", "an experiment file holds a mapping of sections");
  experiment_ = sweep::with_absolute_section_files(sweep_.base_source, folder);
  sweep_.base = YAML::Clone(experiment_);
  for (const auto& [path, value] : fixed) sweep::set_value(sweep_.base, path, YAML::Node(value));
  for (const VaryAxis& axis : axes_) {
    sweep_.axes.push_back({axis.path, {"--vary " + axis.argument, 0, 0}, {}});
    plan_.columns.push_back(axis.path);
  }
  points_dir_ = settings_.folder + "/points";
  prepare_points_folder(points_dir_, settings_.resume, settings_.folder);
}

sweep::Point Evaluator::plan_point(const Choice& choice) const {
  // Axes without values define the columns and expand to no point; the one point is explicit.
  sweep::SweepFile one = sweep_;
  std::vector<sweep::Setting> settings;
  for (size_t a = 0; a < axes_.size(); ++a)
    if (choice[a] != kBaseValue)
      settings.push_back({axes_[a].path, YAML::Node(axes_[a].values[size_t(choice[a])]), sweep_.axes[a].where});
  one.points = {settings};
  return sweep::plan_points(one).points.front();
}

std::string Evaluator::experiment_yaml(const Choice& choice) const {
  YAML::Node tree = YAML::Clone(experiment_);
  // Whole sections before the keys inside them, as a point applies them.
  std::vector<size_t> order(axes_.size());
  for (size_t a = 0; a < order.size(); ++a) order[a] = a;
  auto depth = [&](size_t a) { return std::count(axes_[a].path.begin(), axes_[a].path.end(), '.'); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return depth(a) < depth(b); });
  for (size_t a : order)
    if (choice[a] != kBaseValue) sweep::set_value(tree, axes_[a].path, YAML::Node(axes_[a].values[size_t(choice[a])]));
  return sweep::emit_yaml(tree);
}

std::optional<sweep::Point> Evaluator::plan_point_or_refusal(const Choice& choice) {
  try {
    return plan_point(choice);
  } catch (const config::ConfigError& error) {
    // Values valid one by one may not combine (KV head copies with grid attention):
    // such a point is not run, and is listed as invalid with the loader's reason.
    Evaluated refused{choice, {}, {{"status", "invalid"}, {"error", error.what()}}, rounds_};
    for (size_t a = 0; a < axes_.size(); ++a) {
      const std::string cell = choice[a] == kBaseValue ? "" : axes_[a].values[size_t(choice[a])];
      refused.point.cells.push_back(cell);
      refused.point.values.push_back(cell);
    }
    evaluated_.push_back(std::move(refused));
    return std::nullopt;
  }
}

void Evaluator::check_values() {
  for (size_t a = 0; a < axes_.size(); ++a)
    for (size_t v = 0; v < axes_[a].values.size(); ++v) {
      Choice choice(axes_.size(), kBaseValue);
      choice[a] = int(v);
      plan_point(choice);
    }
}

std::vector<const Evaluated*> Evaluator::evaluate(const std::vector<Choice>& choices) {
  std::vector<size_t> found, fresh;
  bool new_points = false;  // this batch adds points: a round, whether they run now or were run before
  for (const Choice& choice : choices) {
    auto same_choice = [&](const Evaluated& e) { return e.choice == choice; };
    auto known = std::find_if(evaluated_.begin(), evaluated_.end(), same_choice);
    if (known == evaluated_.end()) {
      std::optional<sweep::Point> planned = plan_point_or_refusal(choice);
      if (!planned) {
        rounds_ += new_points ? 0 : 1;
        new_points = true;
        evaluated_.back().round = rounds_;
        found.push_back(evaluated_.size() - 1);
        continue;
      }
      sweep::Point point = std::move(*planned);
      // Another choice may resolve to the same experiment (a value equal to the base's): one point.
      known = std::find_if(evaluated_.begin(), evaluated_.end(),
                           [&](const Evaluated& e) { return e.point.hash == point.hash; });
      if (known == evaluated_.end()) {
        rounds_ += new_points ? 0 : 1;
        new_points = true;
        const std::string base = points_dir_ + "/" + point.hash;
        write_text_atomically(base + ".yaml", point.yaml);
        std::optional<nlohmann::json> record = sweep::read_point_record(base + ".json");
        plan_.points.push_back(point);
        evaluated_.push_back({choice, std::move(point), nlohmann::json(), rounds_});
        if (settings_.resume && reusable(record, settings_.engine))
          evaluated_.back().record = std::move(*record);
        else
          fresh.push_back(evaluated_.size() - 1);
        known = evaluated_.end() - 1;
      }
    }
    found.push_back(size_t(known - evaluated_.begin()));
  }
  if (!fresh.empty()) {
    sweep::write_plan_file(settings_.folder, plan_, settings_.engine);
    if (settings_.backend == "slurm")
      run_on_slurm(fresh);
    else
      run(fresh);
  }
  std::vector<const Evaluated*> out;
  for (size_t index : found) out.push_back(&evaluated_[index]);
  return out;
}

void Evaluator::run(const std::vector<size_t>& indices) {
  std::vector<const sweep::Point*> points;
  for (size_t index : indices) points.push_back(&evaluated_[index].point);
  run_locally(plan_, points, points_dir_, settings_, evaluated_.size(),
              [&](size_t job, nlohmann::json record) { evaluated_[indices[job]].record = std::move(record); });
}

void Evaluator::run_on_slurm(const std::vector<size_t>& indices) {
  std::vector<std::string> hashes;
  for (size_t index : indices) hashes.push_back(evaluated_[index].point.hash);
  const sweep::Submission submission = sweep::submit_array(settings_.folder, hashes, settings_.slurm);
  std::cerr << fmt::format("search: round {}: Slurm job {}, {} task(s) (logs: {}/slurm/)\n", rounds_, submission.job_id,
                           hashes.size(), settings_.folder);
  // The next round depends on this one: wait for the array to end, asking
  // the controller every few seconds.
  for (double pause = 1; sweep::unfinished_tasks(submission) > 0; pause = std::min(pause * 2, 10.0))
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  for (size_t index : indices) {
    Evaluated& point = evaluated_[index];
    std::optional<nlohmann::json> record = sweep::read_point_record(points_dir_ + "/" + point.point.hash + ".json");
    if (reusable(record, settings_.engine)) {
      point.record = std::move(*record);
      continue;
    }
    // No record: it runs again when the search is resumed.
    sweep::PointOutcome outcome;
    outcome.status = "failed";
    outcome.error = "Slurm job " + submission.job_id + " left no result (see " + settings_.folder + "/slurm/)";
    point.record = sweep::point_record(plan_, point.point, settings_.engine, outcome);
  }
}

std::vector<nlohmann::json> Evaluator::rerun(const std::vector<const Evaluated*>& points,
                                             const std::string& engine) const {
  const RunSettings& settings = settings_;
  RunSettings verify = settings;
  verify.engine = engine;
  const std::string points_dir = settings.folder + "/verify/points";
  std::error_code error;
  std::filesystem::create_directories(points_dir, error);
  if (error) throw CommandError(kExitBadInput, "cannot create " + points_dir + ": " + error.message());
  sweep::remove_temporary_files(points_dir);
  sweep::SweepPlan plan;
  plan.columns = plan_.columns;
  std::vector<nlohmann::json> records(points.size());
  std::vector<const sweep::Point*> todo;
  std::vector<size_t> todo_index;
  for (size_t i = 0; i < points.size(); ++i) {
    const sweep::Point& point = points[i]->point;
    plan.points.push_back(point);
    const std::string base = points_dir + "/" + point.hash;
    write_text_atomically(base + ".yaml", point.yaml);
    std::optional<nlohmann::json> record = sweep::read_point_record(base + ".json");
    if (settings.resume && reusable(record, engine)) {
      records[i] = std::move(*record);
    } else {
      todo.push_back(&point);
      todo_index.push_back(i);
    }
  }
  run_locally(plan, todo, points_dir, verify, points.size(),
              [&](size_t job, nlohmann::json record) { records[todo_index[job]] = std::move(record); });
  return records;
}

}  // namespace wafersim::cli::search
