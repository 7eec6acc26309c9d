#include "sim/backend/child_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mapping/does_not_fit.h"
#include "models/cycle_limit.h"

namespace wafersim::backend {

namespace {

using nlohmann::json;

json to_json(const Evaluation& evaluation) {
  const RunFigures& f = evaluation.figures;
  json steps = json::array();
  for (const StepCycles& step : f.first_token_steps) steps.push_back({step.region, step.step, step.cycles});
  return {{"start", evaluation.timeline.start},
          {"finish", evaluation.timeline.finish},
          {"critical_path", evaluation.timeline.critical_path},
          {"backend", f.backend},
          {"measured", f.measured},
          {"busy", {f.compute_busy_mean, f.compute_busy_peak, f.link_busy_mean, f.link_busy_peak}},
          {"counts", {f.tiles_simulated, f.events, f.link_hops}},
          {"steps", steps},
          {"peak_rss_bytes", f.peak_rss_bytes}};
}

Evaluation from_json(const json& document) {
  Evaluation evaluation;
  document.at("start").get_to(evaluation.timeline.start);
  document.at("finish").get_to(evaluation.timeline.finish);
  document.at("critical_path").get_to(evaluation.timeline.critical_path);
  RunFigures& f = evaluation.figures;
  document.at("backend").get_to(f.backend);
  document.at("measured").get_to(f.measured);
  const json& busy = document.at("busy");
  f.compute_busy_mean = busy.at(0);
  f.compute_busy_peak = busy.at(1);
  f.link_busy_mean = busy.at(2);
  f.link_busy_peak = busy.at(3);
  const json& counts = document.at("counts");
  f.tiles_simulated = counts.at(0);
  f.events = counts.at(1);
  f.link_hops = counts.at(2);
  for (const json& step : document.at("steps")) f.first_token_steps.push_back({step.at(0), step.at(1), step.at(2)});
  document.at("peak_rss_bytes").get_to(f.peak_rss_bytes);
  return evaluation;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to report to
    done += size_t(n);
  }
}

}  // namespace

ForkedChild::ForkedChild(const std::function<std::pair<std::string, int>()>& work) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (child == 0) {
    // However the parent dies (kill -9, a sweep's point timeout), its simulation dies with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(pipe_fds[0]);
    const auto [text, status] = work();
    write_all(pipe_fds[1], text);
    ::close(pipe_fds[1]);
    std::cerr.flush();
    ::_exit(status);  // no destructors or atexit handlers: they belong to the parent
  }
  ::close(pipe_fds[1]);
  pid_ = child;
  read_fd_ = pipe_fds[0];
}

ForkedChild::~ForkedChild() {
  if (pid_ < 0) return;
  ::close(read_fd_);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

ChildOutput ForkedChild::wait(const std::function<bool()>& stop) {
  if (pid_ < 0) throw std::logic_error("ForkedChild::wait: waited for already");
  ChildOutput output;
  char buffer[1 << 16];
  for (;;) {
    if (stop) {
      // Wait for the child's text a moment at a time, asking `stop` in between.
      pollfd readable{read_fd_, POLLIN, 0};
      const int ready = ::poll(&readable, 1, kStopPollMilliseconds);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) {
        if (stop()) {
          output.stopped = true;
          break;
        }
        continue;
      }
    }
    const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.text.append(buffer, size_t(n));
  }
  ::close(read_fd_);
  if (output.stopped) ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) output.signal = WTERMSIG(status);
  if (WIFEXITED(status)) output.exit_status = WEXITSTATUS(status);
  return output;
}

ChildOutput run_in_forked_child(const std::function<std::pair<std::string, int>()>& work,
                                const std::function<bool()>& stop) {
  return ForkedChild(work).wait(stop);
}

namespace {

// The child's side: the evaluation, or what it threw, as text.
std::pair<std::string, int> evaluation_reply(const std::function<Evaluation()>& evaluate) {
  json reply;
  try {
    reply = {{"evaluation", to_json(evaluate())}};
  } catch (const CycleLimitError& error) {
    reply = {{"error", error.what()}, {"kind", "cycle_limit"}};
  } catch (const mapping::DoesNotFitError& error) {
    reply = {{"error", error.what()}, {"kind", "does_not_fit"}};
  } catch (const std::bad_alloc& error) {
    reply = {{"error", error.what()}, {"kind", "out_of_memory"}};
  } catch (const std::exception& error) {
    reply = {{"error", error.what()}};
  }
  return std::make_pair(reply.dump(), reply.contains("error") ? 1 : 0);
}

// The parent's side: the evaluation, or the child's exception rethrown, so each keeps its exit code.
Evaluation evaluation_of(const ChildOutput& output) {
  if (output.signal != 0)
    throw std::runtime_error("the child process simulating the prefill was killed by signal " +
                             std::to_string(output.signal));
  const json reply = json::parse(output.text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) throw std::runtime_error("the child process simulating the prefill sent no result");
  if (reply.contains("error")) {
    const std::string kind = reply.value("kind", ""), error = reply.at("error").get<std::string>();
    if (kind == "cycle_limit") throw CycleLimitError(error);
    if (kind == "does_not_fit") throw mapping::DoesNotFitError(error);
    if (kind == "out_of_memory") throw std::bad_alloc();
    throw std::runtime_error(error);
  }
  return from_json(reply.at("evaluation"));
}

class ChildEvaluation : public PendingEvaluation {
 public:
  explicit ChildEvaluation(const std::function<Evaluation()>& evaluate)
      : child_([&evaluate] { return evaluation_reply(evaluate); }) {}
  Evaluation collect() override { return evaluation_of(child_.wait()); }

 private:
  ForkedChild child_;
};

}  // namespace

Evaluation evaluate_in_forked_child(const std::function<Evaluation()>& evaluate) {
  return start_in_forked_child(evaluate)->collect();
}

std::unique_ptr<PendingEvaluation> start_in_forked_child(const std::function<Evaluation()>& evaluate) {
  return std::make_unique<ChildEvaluation>(evaluate);
}

}  // namespace wafersim::backend
