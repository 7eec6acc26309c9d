// wafersim sweep: run every point of a sweep file, each in a process of its
// own, and collect the results in one table (see docs/SWEEPS.md).
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include "models/config/text.h"
#include "sim/cli/commands.h"
#include "sim/cli/output.h"
#include "sim/cli/sweep/points.h"
#include "sim/cli/sweep/results.h"
#include "sim/cli/sweep/runner.h"
#include "sim/cli/sweep/temporary_files.h"
#include "sim/cli/sweep/yaml_tree.h"

namespace wafersim::cli {

namespace {

using namespace sweep;

// A point still running after a day is taken to be stuck: a simulated point of
// Llama 3.1 8B on a WSE-3 runs about 0.85 s per token, so a day holds some
// 100,000 tokens.
constexpr double kDefaultPointTimeoutSeconds = 86400;

struct SweepOptions {
  std::string file;
  std::string out_dir;
  std::string engine;  // "" = the sweep file's
  unsigned jobs = 0;   // 0 = one per core
  bool resume = false;
  double point_timeout_seconds = kDefaultPointTimeoutSeconds;
};

// Holds DIR/sweep.lock while the sweep writes DIR, so two sweeps never share a folder.
class FolderLock {
 public:
  explicit FolderLock(const std::string& folder) {
    const std::string path = folder + "/sweep.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw CommandError(kExitBadInput, "cannot write " + path + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0)
      throw CommandError(kExitBadInput,
                         "another wafersim sweep is writing to " + folder + "; wait for it or choose another --out");
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

std::string label(const SweepPlan& plan, size_t index) {
  std::vector<std::string> values;
  for (size_t c = 0; c < plan.columns.size(); ++c)
    values.push_back(plan.columns[c] + "=" + plan.points[index].cells[c]);
  const std::string where = fmt::format("point {} of {}", index + 1, plan.points.size());
  return values.empty() ? where : where + " (" + config::join(values) + ")";
}

YAML::Node sequence_of(const std::vector<std::string>& items) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& item : items) list.push_back(item);
  return list;
}

// DIR/sweep.yaml: the sweep as it ran, itself a sweep file.
std::string resolved_sweep(const SweepFile& sweep, const SweepPlan& plan, const std::string& engine,
                           const std::vector<std::string>& metrics) {
  YAML::Node root(YAML::NodeType::Map);
  root["base"] = YAML::Clone(sweep.base);
  root["engine"] = engine;
  root["mode"] = sweep.mode;
  if (!sweep.axes.empty()) {
    YAML::Node axes(YAML::NodeType::Map);
    for (const Axis& axis : sweep.axes) {
      YAML::Node values(YAML::NodeType::Sequence);
      for (const Setting& value : axis.values) values.push_back(YAML::Clone(value.value));
      axes[axis.path] = values;
    }
    root["axes"] = axes;
  }
  if (!sweep.points.empty()) {
    YAML::Node points(YAML::NodeType::Sequence);
    for (const std::vector<Setting>& settings : sweep.points) {
      YAML::Node point(YAML::NodeType::Map);
      for (const Setting& setting : settings) point[setting.path] = YAML::Clone(setting.value);
      points.push_back(point);
    }
    root["points"] = points;
  }
  root["metrics"] = sequence_of(metrics);
  if (!sweep.seeds.empty()) {
    YAML::Node seeds(YAML::NodeType::Sequence);
    for (const Setting& seed : sweep.seeds) seeds.push_back(YAML::Clone(seed.value));
    YAML::Node repeat(YAML::NodeType::Map);
    repeat["seeds"] = seeds;
    root["repeat"] = repeat;
  }
  std::vector<std::string> hashes;
  for (const Point& point : plan.points) hashes.push_back(point.hash);
  root["point_hashes"] = sequence_of(hashes);
  return "# The sweep " + sweep.path + " as it ran: base inlined, ranges expanded.\n" +
         "# Run it again with: wafersim sweep THIS_FILE --out NEW_DIR\n" + emit_yaml(root);
}

void warn_if_changed(const SweepFile& sweep, const SweepPlan& plan) {
  if (sweep.recorded_hashes.empty()) return;
  std::vector<std::string> hashes;
  for (const Point& point : plan.points) hashes.push_back(point.hash);
  if (hashes != sweep.recorded_hashes)
    std::cerr << "warning: the points of " << sweep.path
              << " no longer resolve to the experiments listed in its point_hashes (a preset or default has changed "
                 "since it was written)\n";
}

std::string results_table(const SweepPlan& plan, const std::vector<std::optional<nlohmann::json>>& records,
                          const std::vector<std::string>& metrics) {
  std::string text = csv_header(plan, metrics);
  for (size_t i = 0; i < plan.points.size(); ++i)
    if (records[i]) text += csv_row(plan.points[i], *records[i], metrics);
  return text;
}

void warn_missing_metrics(const SweepPlan& plan, const std::vector<std::optional<nlohmann::json>>& records,
                          const std::vector<std::string>& metrics, const std::string& points_dir) {
  std::optional<size_t> some_ok;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i] && (*records[i])["status"] == "ok") some_ok = i;
  if (!some_ok) return;
  for (const std::string& metric : metrics) {
    bool found = false;
    for (const auto& record : records)
      if (record && has_json_path(record->value("result", nlohmann::json()), metric)) found = true;
    if (!found)
      std::cerr << "warning: no result has " << config::quoted(metric) << "; the paths a result holds are in "
                << points_dir << "/" << plan.points[*some_ok].hash << ".json under \"result\"\n";
  }
}

bool holds_results(const std::string& out_dir, const std::string& points_dir) {
  if (std::filesystem::exists(out_dir + "/results.csv")) return true;
  for (const auto& entry : std::filesystem::directory_iterator(points_dir))
    if (entry.path().extension() == ".json") return true;
  return false;
}

// A sweep writes several files and folders into --out: never into "" (the
// working directory by accident) or the file-system root.
void refuse_unsafe_out(const std::string& out) {
  if (out.empty()) throw CommandError(kExitBadInput, "--out needs a folder name, got an empty one");
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(out, error);
  if (!error && absolute == absolute.root_path())
    throw CommandError(kExitBadInput, "--out " + out + " is the file-system root; choose a folder for the sweep");
}

constexpr const char* kResolvedFrom = "# resolved from ";

std::string canonical_text(const std::string& path) {
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

// The sweep file a folder's results come from, recorded on the first line of
// its sweep.yaml. --resume continues that sweep, not another one; resuming
// from the folder's own sweep.yaml keeps the original source.
std::string sweep_source(const std::string& out, const std::string& file, bool resume) {
  const std::string given = canonical_text(file);
  std::ifstream recorded(out + "/sweep.yaml");
  std::string first_line;
  if (!resume || !recorded || !std::getline(recorded, first_line) || first_line.rfind(kResolvedFrom, 0) != 0)
    return given;
  const std::string source = first_line.substr(std::strlen(kResolvedFrom));
  if (source == given || canonical_text(out + "/sweep.yaml") == given) return source;
  throw CommandError(kExitBadInput, "--resume: " + out + " holds the sweep of " + source + ", not of " + given +
                                        "; resume it with that file or choose another --out");
}

// A stop signal sent while the sweep starts (before its runner watches them)
// stays pending until the runner takes it, so the sweep still ends with exit
// 130 and the resume hint instead of dying on the spot.
void hold_stop_signals() {
  sigset_t stop_signals;
  ::sigemptyset(&stop_signals);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop_signals, signal);
  ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
}

// A point whose run was killed from outside (the out-of-memory killer, kill -9)
// did not fail on its own input: --resume runs it again. Runs end by their own
// exit code below 128; the runner records 128 + N for a run ended by signal N.
bool died_by_signal(const nlohmann::json& record) {
  return record.value("status", "") == "failed" && record.value("exit_code", 0) > 128;
}

void run_sweep_unguarded(const SweepOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  const SweepFile sweep = load_sweep_file(options.file);
  const std::string engine = options.engine.empty() ? sweep.engine : options.engine;
  const std::vector<std::string> metrics = sweep.metrics.empty() ? default_metrics(engine) : sweep.metrics;
  const SweepPlan plan = plan_points(sweep);
  warn_if_changed(sweep, plan);
  if (plan.duplicates)
    std::cerr << plan.duplicates << " point(s) resolve to the same experiment as an earlier point and run once\n";

  const std::string& out = options.out_dir;
  refuse_unsafe_out(out);
  const std::string points_dir = out + "/points";
  std::error_code error;
  std::filesystem::create_directories(points_dir, error);
  if (error) throw CommandError(kExitBadInput, "cannot create " + points_dir + ": " + error.message());
  FolderLock lock(out);
  if (!options.resume && holds_results(out, points_dir))
    throw CommandError(kExitBadInput,
                       out +
                           " already holds sweep results; pass --resume to continue that sweep, or choose "
                           "another --out");
  const std::string source = sweep_source(out, options.file, options.resume);
  remove_temporary_files(points_dir);

  auto point_file = [&](const Point& point, const char* suffix) { return points_dir + "/" + point.hash + suffix; };
  std::vector<std::optional<nlohmann::json>> records(plan.points.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    write_text_atomically(point_file(plan.points[i], ".yaml"), plan.points[i].yaml);
    // A result of another engine is not this sweep's result: it runs again.
    std::optional<nlohmann::json> record = read_point_record(point_file(plan.points[i], ".json"));
    if (options.resume && record && (*record)["engine"] == engine && !died_by_signal(*record))
      records[i] = std::move(record);
    else
      todo.push_back(i);
  }
  write_text_atomically(out + "/sweep.yaml",
                        kResolvedFrom + source + "\n" + resolved_sweep(sweep, plan, engine, metrics));
  const std::string csv_path = out + "/results.csv";
  write_text_atomically(csv_path, results_table(plan, records, metrics));

  std::vector<Job> jobs;
  for (size_t i : todo) {
    const Point& point = plan.points[i];
    const std::string json_path = point_file(point, ".result.tmp");
    const std::string command = engine == "sim" ? "run" : engine;  // the engine's wafersim command
    jobs.push_back({{command, point_file(point, ".yaml"), "--json", json_path, "--quiet"},
                    json_path,
                    point_file(point, ".stderr.tmp"),
                    label(plan, i)});
  }
  RunnerOptions runner;
  runner.jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  runner.total = plan.points.size();
  runner.done = plan.points.size() - todo.size();
  runner.point_timeout_seconds = options.point_timeout_seconds;
  const RunnerSummary summary = run_jobs(jobs, runner, [&](size_t job, const Outcome& outcome) {
    const size_t i = todo[job];
    nlohmann::json record = point_record(plan, plan.points[i], engine, outcome);
    write_text_atomically(point_file(plan.points[i], ".json"), record.dump(2) + "\n");
    // Rows arrive in finishing order; the table is rewritten in sweep order at the end.
    append_text(csv_path, csv_row(plan.points[i], record, metrics));
    records[i] = std::move(record);
  });
  // A run stopped while writing its own result leaves that file's temporary behind.
  remove_temporary_files(points_dir);
  write_text_atomically(csv_path, results_table(plan, records, metrics));
  warn_missing_metrics(plan, records, metrics, points_dir);

  size_t finished = 0;
  for (const auto& record : records) finished += record ? 1 : 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << fmt::format(
                   "{} of {} points finished ({} ok, {} do not fit, {} failed in this run; {} from before) "
                   "in {:.1f} s with {} job(s), engine {}\n",
                   finished, plan.points.size(), summary.ok, summary.does_not_fit, summary.failed, runner.done, seconds,
                   runner.jobs, engine)
            << "results: " << csv_path << "\n"
            << "plot:    scripts/plot_sweep.py " << out << "   (from the wafersim source folder)\n";
  if (summary.interrupted)
    throw CommandError(130, fmt::format("sweep interrupted with {} of {} points finished; continue it with: "
                                        "wafersim sweep {} --out {} --resume",
                                        finished, plan.points.size(), options.file, out));
}

void run_sweep(const SweepOptions& options) {
  hold_stop_signals();
  try {
    run_sweep_unguarded(options);
  } catch (const std::filesystem::filesystem_error& error) {
    throw CommandError(kExitBadInput, fmt::format("cannot use {}: {}", error.path1().string(), error.code().message()));
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep", "Run every point of a sweep file, each in its own process, into a results table (docs/SWEEPS.md)");
  command->add_option("FILE", options->file, "Sweep YAML file")->required();
  command->add_option("--out", options->out_dir, "Output folder: points/, results.csv, sweep.yaml")->required();
  command->add_option("--jobs", options->jobs, "Points run at once (default: one per core)")
      ->check(CLI::Range(1u, 1024u));
  command->add_flag("--resume", options->resume, "Keep the finished points in --out and run only the others");
  command
      ->add_option("--point-timeout", options->point_timeout_seconds,
                   "Seconds a point may run before it is killed and recorded as timed out (exit code 124); 0 = no "
                   "limit")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  command->add_option("--engine", options->engine, "Override the sweep file's engine")
      ->check(CLI::IsMember(engine_names()));
  command->callback([options] { run_sweep(*options); });
}

}  // namespace wafersim::cli
