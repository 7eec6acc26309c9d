// wafersim sweep: run every point of a sweep file, each in a process of its
// own, here or as a Slurm job array, and collect the results in one table
// (see docs/SWEEPS.md).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
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
#include "sim/cli/sweep/point_task.h"
#include "sim/cli/sweep/points.h"
#include "sim/cli/sweep/program_output.h"
#include "sim/cli/sweep/results.h"
#include "sim/cli/sweep/runner.h"
#include "sim/cli/sweep/slurm.h"
#include "sim/cli/sweep/temporary_files.h"
#include "sim/cli/sweep/yaml_tree.h"
#include "sim/reports/output.h"

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
  bool dry_run = false;           // list the points, validated, and run none
  std::string backend = "local";  // local | slurm
  SlurmOptions slurm;
  bool wait = false;      // follow the Slurm array until it ends
  bool collect = false;   // only build results.csv from what has finished
  std::string emit_jobs;  // write one command line per point to this file instead of running them
  double point_timeout_seconds = kDefaultPointTimeoutSeconds;
};

// Holds DIR/sweep.lock while the sweep writes DIR, so two sweeps never share a folder.
class FolderLock {
 public:
  explicit FolderLock(const std::string& folder) : path_(folder + "/sweep.lock") {
    const std::string& path = path_;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) throw CommandError(kExitBadInput, "cannot write " + path + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0)
      throw CommandError(kExitBadInput,
                         "another wafersim sweep is writing to " + folder + "; wait for it or choose another --out");
  }
  // The file goes while the lock is still held, so a finished sweep leaves none behind.
  ~FolderLock() {
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string path_;
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

// Everything every backend needs in DIR before a point runs.
struct PreparedSweep {
  std::string out;  // absolute for the Slurm backend and --emit-jobs: their jobs may start elsewhere
  std::string points_dir;
  std::string engine;
  std::vector<std::string> metrics;
  SweepPlan plan;
  std::vector<std::optional<nlohmann::json>> records;  // the finished points of this engine
  std::vector<size_t> todo;                            // the others
  std::string active_job;                              // a Slurm job of this folder that has not ended, or ""
};

// The first Slurm array of this folder with tasks not yet ended, or "".
std::string active_slurm_job(const std::string& out) {
  for (const Submission& submission : read_submissions(out))
    if (unfinished_tasks(submission) > 0) return submission.job_id;
  return "";
}

PreparedSweep prepare(const SweepOptions& options, std::optional<FolderLock>& lock) {
  PreparedSweep prepared;
  const SweepFile sweep = load_sweep_file(options.file);
  prepared.engine = options.engine.empty() ? sweep.engine : options.engine;
  prepared.metrics = sweep.metrics.empty() ? default_metrics(prepared.engine) : sweep.metrics;
  prepared.plan = plan_points(sweep);
  const SweepPlan& plan = prepared.plan;
  warn_if_changed(sweep, plan);
  if (plan.duplicates)
    std::cerr << plan.duplicates << " point(s) resolve to the same experiment as an earlier point and run once\n";
  if (options.dry_run) {
    for (size_t i = 0; i < plan.points.size(); ++i)
      std::cout << label(plan, i) << ": config hash " << plan.points[i].hash << "\n";
    std::cout << fmt::format("{} point(s), engine {}, every one valid; --dry-run: nothing run\n", plan.points.size(),
                             prepared.engine);
    return prepared;  // nothing written, nothing locked
  }

  if (options.out_dir.empty())
    throw CommandError(kExitBadInput, "sweep needs --out DIR (or --dry-run to only list the points)");
  refuse_unsafe_out(options.out_dir);
  const bool elsewhere = options.backend == "slurm" || !options.emit_jobs.empty();
  prepared.out = elsewhere ? std::filesystem::absolute(options.out_dir).lexically_normal().string() : options.out_dir;
  if (prepared.out.size() > 1 && prepared.out.back() == '/') prepared.out.pop_back();
  const std::string& out = prepared.out;
  prepared.points_dir = out + "/points";
  std::error_code error;
  std::filesystem::create_directories(prepared.points_dir, error);
  if (error) throw CommandError(kExitBadInput, "cannot create " + prepared.points_dir + ": " + error.message());
  // A planted link would send every point file outside the sweep folder.
  if (std::filesystem::is_symlink(prepared.points_dir))
    throw CommandError(kExitBadInput, "cannot write " + prepared.points_dir + ": it is a symbolic link, not a folder");
  lock.emplace(out);
  const bool continuing = options.resume || options.collect;
  if (!continuing && holds_results(out, prepared.points_dir))
    throw CommandError(kExitBadInput,
                       out +
                           " already holds sweep results; pass --resume to continue that sweep, or choose "
                           "another --out");
  const std::string source = sweep_source(out, options.file, continuing);
  prepared.active_job = active_slurm_job(out);
  // A running task's temporary files are its own.
  if (prepared.active_job.empty()) remove_temporary_files(prepared.points_dir);

  prepared.records.resize(plan.points.size());
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const std::string base = prepared.points_dir + "/" + plan.points[i].hash;
    write_text_atomically(base + ".yaml", plan.points[i].yaml);
    // A result of another engine is not this sweep's result: it runs again.
    std::optional<nlohmann::json> record = read_point_record(base + ".json");
    if (continuing && record && (*record)["engine"] == prepared.engine && !died_by_signal(*record))
      prepared.records[i] = std::move(record);
    else
      prepared.todo.push_back(i);
  }
  write_text_atomically(out + "/sweep.yaml",
                        kResolvedFrom + source + "\n" + resolved_sweep(sweep, plan, prepared.engine, prepared.metrics));
  write_plan_file(out, plan, prepared.engine);
  return prepared;
}

void refuse_if_active(const PreparedSweep& prepared) {
  if (!prepared.active_job.empty())
    throw CommandError(kExitBadInput, "Slurm job " + prepared.active_job + " of " + prepared.out +
                                          " still has tasks pending or running; wait for it (squeue -j " +
                                          prepared.active_job + "), or stop it with scancel " + prepared.active_job +
                                          ", then run again");
}

void run_local(const SweepOptions& options, PreparedSweep& prepared) {
  const auto begin = std::chrono::steady_clock::now();
  refuse_if_active(prepared);
  const SweepPlan& plan = prepared.plan;
  const std::string& out = prepared.out;
  auto& records = prepared.records;
  const std::string csv_path = out + "/results.csv";
  write_text_atomically(csv_path, results_table(plan, records, prepared.metrics));

  std::vector<Job> jobs;
  for (size_t i : prepared.todo)
    jobs.push_back(point_job(prepared.points_dir, plan.points[i], prepared.engine, label(plan, i)));
  RunnerOptions runner;
  runner.jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  runner.total = plan.points.size();
  runner.done = plan.points.size() - prepared.todo.size();
  runner.point_timeout_seconds = options.point_timeout_seconds;
  const RunnerSummary summary = run_jobs(jobs, runner, [&](size_t job, const PointOutcome& outcome) {
    const size_t i = prepared.todo[job];
    nlohmann::json record = write_point_record(prepared.points_dir, plan, plan.points[i], prepared.engine, outcome);
    // Rows arrive in finishing order; the table is rewritten in sweep order at the end.
    append_text(csv_path, csv_row(plan.points[i], record, prepared.metrics));
    records[i] = std::move(record);
  });
  // A run stopped while writing its own result leaves that file's temporary behind.
  remove_temporary_files(prepared.points_dir);
  write_text_atomically(csv_path, results_table(plan, records, prepared.metrics));
  warn_missing_metrics(plan, records, prepared.metrics, prepared.points_dir);

  size_t finished = 0;
  for (const auto& record : records) finished += record ? 1 : 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << fmt::format(
                   "{} of {} points finished ({} ok, {} do not fit, {} failed in this run; {} from before) "
                   "in {:.1f} s with {} job(s), engine {}\n",
                   finished, plan.points.size(), summary.ok, summary.does_not_fit, summary.failed, runner.done, seconds,
                   runner.jobs, prepared.engine)
            << "results: " << csv_path << "\n"
            << "plot:    scripts/plot_sweep.py " << out << "   (from the wafersim source folder)\n";
  if (summary.interrupted)
    throw CommandError(kExitInterrupted,
                       fmt::format("sweep interrupted with {} of {} points finished; continue it with: "
                                   "wafersim sweep {} --out {} --resume",
                                   finished, plan.points.size(), options.file, out));
}

// Why a point has no record, from the scheduler's word on its latest task.
std::pair<std::string, std::string> missing_status(const std::optional<TaskState>& task) {
  if (!task) return {"missing", "not run yet"};
  if (is_unfinished_state(task->state)) return {"missing", "Slurm task " + task->task + " is " + task->state};
  std::string error = "Slurm task " + task->task + " ended " + task->state + " without a record";
  if (task->state == "TIMEOUT") error += " (killed at its time limit; raise --time)";
  if (task->state == "OUT_OF_MEMORY") error += " (raise --mem)";
  return {"failed", error};
}

// DIR/results.csv from whatever has finished, one row per point: those without
// a record are marked missing or failed, with the scheduler's state when
// Slurm ran them. Returns the number of points without a record.
size_t collect(const SweepOptions& options, const PreparedSweep& prepared) {
  const SweepPlan& plan = prepared.plan;
  const std::vector<Submission> submissions = read_submissions(prepared.out);
  const std::map<std::string, TaskState> tasks =
      submissions.empty() ? std::map<std::string, TaskState>() : task_states(submissions);
  std::string text = csv_header(plan, prepared.metrics);
  std::map<std::string, size_t> counts;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const Point& point = plan.points[i];
    if (prepared.records[i]) {
      text += csv_row(point, *prepared.records[i], prepared.metrics);
      ++counts[(*prepared.records[i])["status"].get<std::string>()];
      continue;
    }
    const auto found = tasks.find(point.hash);
    const auto [status, error] =
        missing_status(found == tasks.end() ? std::nullopt : std::optional<TaskState>(found->second));
    text += csv_row_without_record(point, prepared.metrics, status, error);
    ++counts[status == "missing" ? "missing" : "killed"];
  }
  const std::string csv_path = prepared.out + "/results.csv";
  write_text_atomically(csv_path, text);
  warn_missing_metrics(plan, prepared.records, prepared.metrics, prepared.points_dir);
  const size_t without_record = counts["missing"] + counts["killed"];
  std::cout << fmt::format(
                   "{} of {} points finished ({} ok, {} do not fit, {} failed); {} ended by the scheduler "
                   "without a result, {} not run yet or still running\n",
                   plan.points.size() - without_record, plan.points.size(), counts["ok"], counts["does_not_fit"],
                   counts["failed"], counts["killed"], counts["missing"])
            << "results: " << csv_path << "\n";
  if (without_record)
    std::cout << "run the others: wafersim sweep " << options.file << " --out " << options.out_dir << " --resume"
              << (submissions.empty() ? "" : " --backend slurm") << "\n";
  return without_record;
}

void emit_jobs(const SweepOptions& options, const PreparedSweep& prepared) {
  refuse_if_active(prepared);
  std::string lines;
  for (size_t i : prepared.todo)
    lines += shell_quoted(wafersim_executable()) + " sweep-point " + shell_quoted(prepared.out) + " " +
             prepared.plan.points[i].hash + "\n";
  write_text_atomically(options.emit_jobs, lines);
  std::cout << fmt::format(
      "{} command line(s), one per point not yet done, in {}; run them where {} is "
      "visible, then: wafersim sweep {} --out {} --collect\n",
      prepared.todo.size(), options.emit_jobs, prepared.out, options.file, options.out_dir);
}

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3600) return fmt::format("{}:{:02} min", int(seconds) / 60, int(seconds) % 60);
  return fmt::format("{}:{:02} h", int(seconds) / 3600, int(seconds) % 3600 / 60);
}

// Follows an array until no task of it is left, with a progress line and an
// ETA on stderr. Ctrl-C stops following, not the array.
void follow(const PreparedSweep& prepared, const Submission& submission) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const bool terminal = ::isatty(2) == 1;
  std::vector<bool> seen(submission.hashes.size(), false);
  size_t finished = 0, failures = 0;
  auto last_shown = Clock::time_point{};
  while (true) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    size_t running = 0, unfinished = 0;
    try {
      unfinished = unfinished_tasks(submission, &running);
      failures = 0;
    } catch (const CommandError& error) {
      // A busy or restarting controller: try again a few times before giving up.
      if (++failures >= 5)
        throw CommandError(kExitBadInput, std::string(error.what()) +
                                              "; the array may still run: collect it "
                                              "later with --collect");
      unfinished = 1;
    }
    for (size_t i = 0; i < submission.hashes.size(); ++i) {
      if (seen[i]) continue;
      const std::optional<nlohmann::json> record =
          read_point_record(prepared.points_dir + "/" + submission.hashes[i] + ".json");
      if (record && (*record)["engine"] == prepared.engine) {
        seen[i] = true;
        ++finished;
      }
    }
    const size_t done = prepared.plan.points.size() - prepared.todo.size() + finished;
    if (unfinished == 0 || std::chrono::duration<double>(Clock::now() - last_shown).count() >= (terminal ? 0 : 10)) {
      last_shown = Clock::now();
      const std::string eta =
          finished ? duration_text(elapsed / double(finished) * double(submission.hashes.size() - finished))
                   : std::string("?");
      const std::string line =
          fmt::format("sweep: {}/{} points done, Slurm job {}: {} running, {} waiting, {} elapsed, ETA {}", done,
                      prepared.plan.points.size(), submission.job_id, running,
                      unfinished - std::min(unfinished, running), duration_text(elapsed), eta);
      if (terminal)
        std::cerr << "\r\033[K" << line << std::flush;
      else
        std::cerr << line << "\n";
    }
    if (unfinished == 0) break;
    // Ask the controller often at first, then at most every 10 s.
    const double pause = std::clamp(elapsed / 20, 1.0, 10.0);
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
  if (terminal) std::cerr << "\n";
}

void run_slurm(const SweepOptions& options, PreparedSweep& prepared, std::optional<FolderLock>& lock) {
  refuse_if_active(prepared);
  if (options.resume) collect(options, prepared);
  if (prepared.todo.empty()) {
    lock.reset();
    std::cout << "every point of " << prepared.out << " has a result; nothing to submit\n";
    collect(options, prepared);
    return;
  }
  std::vector<std::string> hashes;
  for (size_t i : prepared.todo) hashes.push_back(prepared.plan.points[i].hash);
  const Submission submission = submit_array(prepared.out, hashes, options.slurm);
  // Tasks lock their own points; the folder is free for --collect meanwhile.
  lock.reset();
  std::cout << fmt::format(
      "submitted Slurm job {}: an array of {} task(s), one per point not yet done "
      "(logs: {}/slurm/{}_<task>.log)\n",
      submission.job_id, hashes.size(), prepared.out, submission.job_id);
  if (!options.wait) {
    std::cout << "follow it with: squeue -j " << submission.job_id << "\n"
              << "collect results: wafersim sweep " << options.file << " --out " << options.out_dir << " --collect\n";
    return;
  }
  follow(prepared, submission);
  // The records written meanwhile are this sweep's results.
  for (size_t i : prepared.todo) {
    std::optional<nlohmann::json> record =
        read_point_record(prepared.points_dir + "/" + prepared.plan.points[i].hash + ".json");
    if (record && (*record)["engine"] == prepared.engine) prepared.records[i] = std::move(record);
  }
  const size_t without_record = collect(options, prepared);
  if (without_record)
    throw CommandError(kExitIncomplete, fmt::format("Slurm job {} ended with {} point(s) without a result (see "
                                                    "the error column of results.csv)",
                                                    submission.job_id, without_record));
}

void check_flags(const SweepOptions& options) {
  const bool slurm = options.backend == "slurm";
  if (!slurm && options.wait)
    throw CommandError(kExitBadInput, "--wait follows a Slurm array: it needs --backend slurm");
  const SlurmOptions& s = options.slurm;
  if (!slurm &&
      (!s.partition.empty() || !s.time_limit.empty() || !s.memory.empty() || s.max_parallel || !s.extra_args.empty()))
    throw CommandError(kExitBadInput,
                       "--partition, --time, --mem, --max-parallel and --sbatch-arg need --backend slurm");
  if (slurm && options.jobs)
    throw CommandError(kExitBadInput,
                       "--jobs is for --backend local; with Slurm, --max-parallel limits the tasks "
                       "running at once");
  if (!options.emit_jobs.empty() && (slurm || options.collect))
    throw CommandError(kExitBadInput,
                       "--emit-jobs writes command lines for another scheduler: not with "
                       "--backend slurm or --collect");
  if (options.collect && options.wait)
    throw CommandError(kExitBadInput, "--collect gathers what has finished; --wait belongs to a submission");
}

void run_sweep_unguarded(const SweepOptions& options) {
  check_flags(options);
  std::optional<FolderLock> lock;
  PreparedSweep prepared = prepare(options, lock);
  if (options.dry_run) return;
  if (options.collect)
    collect(options, prepared);
  else if (!options.emit_jobs.empty())
    emit_jobs(options, prepared);
  else if (options.backend == "slurm")
    run_slurm(options, prepared, lock);
  else
    run_local(options, prepared);
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
  command->add_option("--out", options->out_dir, "Output folder: points/, results.csv, sweep.yaml");
  command->add_flag("--dry-run", options->dry_run, "List the points, each validated, and run none");
  command->add_option("--jobs", options->jobs, "Points run at once (default: one per core)")
      ->check(CLI::Range(1u, 1024u));
  command->add_flag("--resume", options->resume, "Keep the finished points in --out and run only the others");
  command
      ->add_option("--point-timeout", options->point_timeout_seconds,
                   "Seconds a point may run before it is killed and recorded as timed out (exit code 124); 0 = no "
                   "limit")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {
            // CLI::Range lets NaN through (every comparison with it is false), which would mean no limit.
            const double seconds = std::strtod(text.c_str(), nullptr);
            return seconds >= 0 && seconds <= 1e9 ? std::string() : "must be a number of seconds from 0 to 1e9";
          },
          "SECONDS"));
  command->add_option("--engine", options->engine, "Override the sweep file's engine")
      ->check(CLI::IsMember(engine_names()));
  command->add_option("--backend", options->backend, "Where the points run: local (default) or slurm (one job array)")
      ->check(CLI::IsMember({"local", "slurm"}));
  command->add_option("--partition", options->slurm.partition, "Slurm partition of the array");
  command->add_option("--time", options->slurm.time_limit, "Slurm time limit per point, e.g. 00:10:00");
  command->add_option("--mem", options->slurm.memory, "Slurm memory per point, e.g. 2G");
  command->add_option("--max-parallel", options->slurm.max_parallel, "Slurm tasks running at once (--array=...%N)")
      ->check(CLI::Range(1u, 1000000u));
  command->add_option("--sbatch-arg", options->slurm.extra_args, "Extra sbatch argument, passed as is (repeatable)")
      ->allow_extra_args(false);
  command->add_flag("--wait", options->wait, "Follow the Slurm array to its end, then write results.csv");
  command->add_flag("--collect", options->collect,
                    "Only build results.csv from the points finished so far, marking the others");
  command->add_option("--emit-jobs", options->emit_jobs,
                      "Write one command line per point not yet done to this file, for another scheduler");
  command->callback([options] { run_sweep(*options); });
}

}  // namespace wafersim::cli
