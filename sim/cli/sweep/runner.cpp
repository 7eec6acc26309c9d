#include "sim/cli/sweep/runner.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/config/text.h"
#include "sim/cli/progress_line.h"
#include "sim/cli/sweep/program_output.h"
#include "sim/reports/exit_codes.h"

namespace wafersim::cli::sweep {

using reports::kExitDoesNotFit;
using reports::kExitNotStarted;
using reports::kExitOk;
using reports::kExitTimedOut;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Signals are taken synchronously (sigtimedwait) while jobs run: no handler
// runs at an awkward moment, and a stop request is seen within one wait.
class SignalWatch {
 public:
  SignalWatch() {
    ::sigemptyset(&watched_);
    for (int signal : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&watched_, signal);
    ::sigprocmask(SIG_BLOCK, &watched_, &previous_mask_);
    // The sweep may have blocked the stop signals before (so that one sent while it
    // starts is not lost); its runs must still take them.
    child_mask_ = previous_mask_;
    for (int signal : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) ::sigdelset(&child_mask_, signal);
    // An ignored SIGCHLD would let the kernel reap the children before we read their status.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &default_action, &previous_chld_);
  }
  ~SignalWatch() {
    const timespec now{0, 0};
    while (::sigtimedwait(&watched_, nullptr, &now) > 0) {
    }
    ::sigaction(SIGCHLD, &previous_chld_, nullptr);
    ::sigprocmask(SIG_SETMASK, &previous_mask_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // The signal that arrived within `seconds`, or 0.
  int wait(double seconds) {
    const timespec timeout{time_t(seconds), long((seconds - double(time_t(seconds))) * 1e9)};
    const int signal = ::sigtimedwait(&watched_, nullptr, &timeout);
    return signal < 0 ? 0 : signal;
  }
  const sigset_t& child_mask() const { return child_mask_; }

 private:
  sigset_t watched_;
  sigset_t previous_mask_;
  sigset_t child_mask_;
  struct sigaction previous_chld_ {};
};

bool is_stop_signal(int signal) { return signal == SIGINT || signal == SIGTERM || signal == SIGHUP; }

pid_t spawn(const std::string& program, const Job& job, const sigset_t& child_mask) {
  std::vector<std::string> words = {program};
  words.insert(words.end(), job.arguments.begin(), job.arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a point: ") + std::strerror(errno));
  if (pid > 0) return pid;
  // Child: only async-signal-safe calls until exec. A killed sweep takes its runs with it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitNotStarted);
  const int null_fd = ::open("/dev/null", O_RDWR);
  const int err_fd = ::open(job.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0666);
  if (null_fd < 0 || err_fd < 0) ::_exit(kExitNotStarted);
  ::dup2(null_fd, 0);
  ::dup2(null_fd, 1);
  ::dup2(err_fd, 2);
  ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(kExitNotStarted);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The run's message: its last line, without progress-line redraws.
std::string last_line(const std::string& text) {
  std::string line;
  std::istringstream lines(text);
  for (std::string candidate; std::getline(lines, candidate);) {
    candidate = candidate.substr(candidate.rfind('\r') == std::string::npos ? 0 : candidate.rfind('\r') + 1);
    if (!candidate.empty()) line = candidate;
  }
  return config::one_line(line.size() > 1000 ? line.substr(0, 1000) : line);
}

void remove_job_files(const Job& job) {
  ::unlink(job.json_path.c_str());
  ::unlink(job.stderr_path.c_str());
}

PointOutcome outcome_of(int status, const Job& job, double seconds) {
  PointOutcome outcome;
  outcome.wall_seconds = seconds;
  const std::string json_text = read_text(job.json_path);
  if (!json_text.empty()) {
    outcome.result = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (outcome.result.is_discarded()) outcome.result = nullptr;
  }
  const std::string message = last_line(read_text(job.stderr_path));
  remove_job_files(job);
  if (WIFSIGNALED(status)) {
    outcome.exit_code = 128 + WTERMSIG(status);
    outcome.status = "failed";
    outcome.error = fmt::format("killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
    return outcome;
  }
  outcome.exit_code = WEXITSTATUS(status);
  if (outcome.exit_code == kExitOk && outcome.result.is_object()) {
    outcome.status = "ok";
  } else if (outcome.exit_code == kExitDoesNotFit) {
    outcome.status = "does_not_fit";
    outcome.error = message;
  } else {
    outcome.status = "failed";
    outcome.error = !message.empty()               ? message
                    : outcome.exit_code == kExitOk ? "the run wrote no result"
                                                   : fmt::format("exit code {}", outcome.exit_code);
  }
  return outcome;
}

// The sweep's progress line (progress_line.h, shared with run).
class Progress {
 public:
  Progress(const RunnerOptions& options) : options_(options), start_(Clock::now()) {}

  void finished(const PointOutcome& outcome, const std::string& label, const RunnerSummary& summary) {
    ++finished_;
    summary_ = summary;
    if (outcome.status == "ok" || !options_.show_progress) return;
    line_.clear();
    std::cerr << label << ": " << (outcome.error.empty() ? outcome.status : outcome.error) << "\n";
  }

  void show(size_t running, bool force = false) {
    if (!options_.show_progress) return;
    const double elapsed = seconds_since(start_);
    const size_t done = options_.done + finished_;
    // The rate of this session's points: those done before a resume took no time now.
    const std::string eta = eta_text(elapsed, double(finished_), double(options_.total - options_.done));
    line_.show(
        fmt::format("sweep: {}/{} points done ({} failed, {} do not fit), {} running, {} elapsed, {}", done,
                    options_.total, summary_.failed, summary_.does_not_fit, running, duration_text(elapsed), eta),
        force);
  }

  void end() {
    if (options_.show_progress) line_.end();
  }

 private:
  RunnerOptions options_;
  ProgressLine line_;
  Clock::time_point start_;
  size_t finished_ = 0;
  RunnerSummary summary_;
};

struct Running {
  pid_t pid;
  size_t index;
  Clock::time_point start;
  bool timed_out = false;
};

// A run killed by the point timeout failed, whatever signal ended it: it is
// not retried by --resume (it would only time out again).
PointOutcome timed_out(PointOutcome outcome, double timeout_seconds) {
  outcome.status = "failed";
  outcome.exit_code = kExitTimedOut;
  outcome.error = fmt::format("timed out after {} (--point-timeout)", duration_text(timeout_seconds));
  outcome.result = nullptr;
  return outcome;
}

}  // namespace

RunnerSummary run_jobs(const std::vector<Job>& jobs, const RunnerOptions& options,
                       const std::function<void(size_t, const PointOutcome&)>& finished) {
  const std::string program = wafersim_executable();
  SignalWatch signals;
  Progress progress(options);
  RunnerSummary summary;
  std::vector<Running> running;
  size_t next = 0;
  bool stopping = false;
  Clock::time_point stop_time;
  auto stop = [&] {
    if (stopping) return;
    stopping = true;
    stop_time = Clock::now();
    for (const Running& run : running) ::kill(run.pid, SIGTERM);
  };

  progress.show(0, true);
  if (is_stop_signal(signals.wait(0))) stop();  // sent while the sweep was starting
  while (true) {
    while (!stopping && next < jobs.size() && running.size() < std::max(1u, options.jobs)) {
      running.push_back({spawn(program, jobs[next], signals.child_mask()), next, Clock::now(), false});
      ++next;
    }
    if (running.empty()) break;
    bool reaped = false;
    for (size_t r = 0; r < running.size();) {
      int status = 0;
      const pid_t pid = ::waitpid(running[r].pid, &status, WNOHANG);
      if (pid == 0 || (pid < 0 && errno == EINTR)) {
        ++r;
        continue;
      }
      const Running run = running[r];
      running.erase(running.begin() + long(r));
      reaped = true;
      const Job& job = jobs[run.index];
      if (pid > 0 && WIFSIGNALED(status) && (stopping || is_stop_signal(WTERMSIG(status)))) {
        // Stopped, not failed: it runs again on --resume.
        remove_job_files(job);
        stop();
        continue;
      }
      PointOutcome outcome = outcome_of(pid > 0 ? status : (kExitNotStarted << 8), job, seconds_since(run.start));
      if (run.timed_out) outcome = timed_out(outcome, options.point_timeout_seconds);
      if (outcome.status == "ok")
        ++summary.ok;
      else if (outcome.status == "does_not_fit")
        ++summary.does_not_fit;
      else
        ++summary.failed;
      finished(run.index, outcome);
      progress.finished(outcome, job.label, summary);
    }
    for (Running& run : running)
      if (options.point_timeout_seconds > 0 && !run.timed_out &&
          seconds_since(run.start) > options.point_timeout_seconds) {
        ::kill(run.pid, SIGKILL);
        run.timed_out = true;
      }
    if (stopping && seconds_since(stop_time) > 5)
      for (const Running& run : running) ::kill(run.pid, SIGKILL);
    if (is_stop_signal(signals.wait(reaped ? 0 : 0.5))) stop();
    progress.show(running.size());
  }
  progress.show(0, true);
  progress.end();
  summary.interrupted = stopping;
  return summary;
}

}  // namespace wafersim::cli::sweep
