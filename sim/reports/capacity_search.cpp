#include "sim/reports/capacity_search.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "models/config/text.h"
#include "sim/experiment/version.h"
#include "sim/reports/command_error.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

namespace {

const std::vector<std::string> kLatencies = {"ttft", "tpot", "e2e", "queue"};
const std::vector<std::string> kStatistics = {"mean", "p50", "p90", "p99", "max"};

// A bracket stops after this many doublings or halvings of the file's rate:
// 4096 times either way.
constexpr int kMaxBracketSteps = 12;

[[noreturn]] void refuse_slo(const std::string& text, const std::string& why) {
  throw CommandError(kExitBadInput, "--slo " + text + ": " + why);
}

// Rates are kept to 4 significant digits, so that a step is the same run as
// `wafersim serve --set serving.CLASS.rate_per_s=RATE` with the rate printed.
double rounded_rate(double rate) { return std::strtod(fmt::format("{:.4g}", rate).c_str(), nullptr); }

std::string rate_text(double rate) { return fmt::format("{:.4g}", rate); }

const serving::Distribution& distribution_of(const serving::ClassMetrics& metrics, const std::string& latency) {
  if (latency == "ttft") return metrics.ttft_ms;
  if (latency == "tpot") return metrics.tpot_ms;
  if (latency == "e2e") return metrics.e2e_ms;
  return metrics.queue_ms;
}

std::optional<double> statistic_of(const serving::Distribution& d, const std::string& statistic) {
  if (d.count == 0) return std::nullopt;
  if (statistic == "mean") return d.mean;
  if (statistic == "p50") return d.p50;
  if (statistic == "p90") return d.p90;
  if (statistic == "p99") return d.p99;
  return d.max;
}

SeedRun judge(const serving::ClassMetrics& metrics, uint64_t seed, const CapacityOptions& options) {
  SeedRun run;
  run.seed = seed;
  run.offered = metrics.offered;
  run.completed = metrics.completed;
  // A request turned away or left unfinished is a request not served within the SLO.
  run.meets = metrics.completed == metrics.offered;
  for (const SloBound& bound : options.slo) {
    const std::optional<double> value = statistic_of(distribution_of(metrics, bound.latency), bound.statistic);
    run.figures_ms.push_back(value);
    run.meets = run.meets && value && *value <= bound.limit_ms;
  }
  return run;
}

class ClassSearch {
 public:
  ClassSearch(size_t index, ClassCapacity& searched, CapacityResult& result,
              const std::function<Experiment(const std::vector<std::string>&)>& load,
              const std::function<ServeOutcome(const Experiment&)>& serve, const CapacityOptions& options,
              const std::function<void(const ClassCapacity&)>& progress)
      : index_(index),
        searched_(searched),
        result_(result),
        load_(load),
        serve_(serve),
        options_(options),
        progress_(progress) {}

  bool step(const std::string& phase, double rate) {
    CapacityStep step{phase, rate, true, {}};
    for (uint64_t seed : result_.seeds) {
      const Experiment experiment = load_(
          {"serving." + searched_.name + ".rate_per_s=" + rate_text(rate), "serving.seed=" + std::to_string(seed)});
      const ServeOutcome outcome = serve_(experiment);
      result_.model_label = outcome.model_label;
      result_.hardware_label = outcome.hardware_label;
      result_.wafers = outcome.wafers;
      step.runs.push_back(judge(outcome.metrics.classes[index_], seed, options_));
      step.meets = step.meets && step.runs.back().meets;
    }
    searched_.steps.push_back(step);
    progress_(searched_);
    return step.meets;
  }

  void run() {
    double meeting = 0, violating = 0;  // 0: not found yet
    const double start = searched_.file_rate_per_s;
    if (step("bracket", start)) {
      meeting = start;
      for (int i = 0; i < kMaxBracketSteps && !violating; ++i) {
        const double rate = rounded_rate(meeting * 2);
        (step("bracket", rate) ? meeting : violating) = rate;
      }
    } else {
      violating = start;
      for (int i = 0; i < kMaxBracketSteps && !meeting; ++i) {
        const double rate = rounded_rate(violating / 2);
        (step("bracket", rate) ? meeting : violating) = rate;
      }
    }
    while (meeting > 0 && violating > 0 && violating > meeting * (1 + options_.tolerance)) {
      // The geometric middle: the bracket may span orders of magnitude.
      const double rate = rounded_rate(std::sqrt(meeting * violating));
      if (rate <= meeting || rate >= violating) break;  // no 4-digit rate between them
      (step("bisect", rate) ? meeting : violating) = rate;
    }
    if (meeting > 0) searched_.rate_per_s = meeting;
    if (violating > 0) searched_.violating_rate_per_s = violating;
  }

 private:
  size_t index_;
  ClassCapacity& searched_;
  CapacityResult& result_;
  const std::function<Experiment(const std::vector<std::string>&)>& load_;
  const std::function<ServeOutcome(const Experiment&)>& serve_;
  const CapacityOptions& options_;
  const std::function<void(const ClassCapacity&)>& progress_;
};

std::string figure_text(const std::optional<double>& value) { return value ? fmt::format("{:.4g}", *value) : "—"; }

// The worst figure of a bound over a step's seeds.
std::optional<double> worst(const CapacityStep& step, size_t bound) {
  std::optional<double> out;
  for (const SeedRun& run : step.runs) {
    if (!run.figures_ms[bound]) return std::nullopt;
    out = std::max(out.value_or(*run.figures_ms[bound]), *run.figures_ms[bound]);
  }
  return out;
}

std::string seeds_text(const std::vector<uint64_t>& seeds) {
  std::vector<std::string> texts;
  for (uint64_t seed : seeds) texts.push_back(std::to_string(seed));
  return config::join(texts);
}

std::string slo_text(const CapacityOptions& options) {
  std::vector<std::string> parts;
  for (const SloBound& bound : options.slo) parts.push_back(bound.key + " <= " + config::format_number(bound.limit_ms));
  return config::join(parts);
}

}  // namespace

std::vector<SloBound> parse_slo(const std::string& text) {
  std::vector<SloBound> bounds;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const size_t equals = item.find('=');
    if (equals == std::string::npos)
      refuse_slo(text, "expects KEY=MS[,KEY=MS...] such as ttft_p99_ms=500,tpot_p99_ms=2, got " + config::quoted(item));
    SloBound bound;
    bound.key = item.substr(0, equals);
    const size_t first = bound.key.find('_'), last = bound.key.rfind('_');
    bound.latency = bound.key.substr(0, first);
    bound.statistic = first == last ? "" : bound.key.substr(first + 1, last - first - 1);
    const bool known = std::find(kLatencies.begin(), kLatencies.end(), bound.latency) != kLatencies.end() &&
                       std::find(kStatistics.begin(), kStatistics.end(), bound.statistic) != kStatistics.end() &&
                       bound.key.substr(last) == "_ms";
    if (!known) {
      std::vector<std::string> keys;
      for (const std::string& latency : kLatencies)
        for (const std::string& statistic : kStatistics) keys.push_back(latency + "_" + statistic + "_ms");
      refuse_slo(text, "unknown bound " + config::quoted(bound.key) +
                           " (LATENCY_STATISTIC_ms: LATENCY ttft, tpot, e2e or queue; STATISTIC mean, p50, p90, p99 "
                           "or max)" +
                           config::did_you_mean(bound.key, keys));
    }
    const std::string value = item.substr(equals + 1);
    char* parsed_end = nullptr;
    bound.limit_ms = value.empty() ? NAN : std::strtod(value.c_str(), &parsed_end);
    if (value.empty() || parsed_end != value.c_str() + value.size() || !std::isfinite(bound.limit_ms) ||
        bound.limit_ms <= 0)
      refuse_slo(text, bound.key + " expects a positive number of milliseconds, got " + config::quoted(value));
    for (const SloBound& other : bounds)
      if (other.key == bound.key) refuse_slo(text, bound.key + " is given twice");
    bounds.push_back(bound);
  }
  return bounds;
}

CapacityResult capacity_search(const std::function<Experiment(const std::vector<std::string>&)>& load,
                               const std::function<mapping::Plan(const Experiment&)>& compile,
                               const backend::Backend& backend, const std::string& step_times_path,
                               const CapacityOptions& options,
                               const std::function<void(const ClassCapacity&)>& progress) {
  const Experiment base = load({});
  const ServingRequests requests = serving_requests(base);
  if (!requests.spec.trace_file.empty())
    throw CommandError(kExitBadInput, "serve --capacity scales each class's rate_per_s; the arrivals of " +
                                          requests.spec.trace_file +
                                          " (serving.trace_file) are its own: use synthetic classes");
  // The plan as serve_run compiles it: one sequence, whole prefill chunks, one copy of each KV head unless set.
  Experiment compiled = base;
  compiled.workload = workloads::serving_plan_workload(base.workload);
  if (compiled.mapping.kv_head_copies == 0) compiled.mapping.kv_head_copies = 1;
  const mapping::Plan plan = compile(compiled);
  const std::function<ServeOutcome(const Experiment&)> serve = [&](const Experiment& loaded) {
    const ServingRequests step = serving_requests(loaded);
    return serve_experiment(compiled, plan, step.spec, step.stream, backend, step_times_path);
  };
  CapacityResult result;
  for (uint32_t i = 0; i < options.seeds; ++i) result.seeds.push_back(requests.spec.seed + i);
  for (size_t c = 0; c < workloads::kRequestClasses; ++c)
    if (requests.spec.classes[c].requests > 0)
      result.classes.push_back(
          {workloads::class_names()[c], requests.spec.classes[c].rate_per_s, std::nullopt, std::nullopt, {}});
  for (ClassCapacity& searched : result.classes) {
    const auto names = workloads::class_names();
    const size_t index = size_t(std::find(names.begin(), names.end(), searched.name) - names.begin());
    ClassSearch(index, searched, result, load, serve, options, progress).run();
  }
  return result;
}

std::string capacity_step_line(const CapacityOptions& options, const ClassCapacity& searched) {
  const CapacityStep& step = searched.steps.back();
  size_t meeting = 0;
  uint64_t requests = 0;
  for (const SeedRun& run : step.runs) {
    meeting += run.meets ? 1 : 0;
    requests += run.offered;
  }
  std::vector<std::string> figures;
  for (size_t b = 0; b < options.slo.size(); ++b)
    figures.push_back(options.slo[b].key + " " + figure_text(worst(step, b)));
  return fmt::format("{} step {}: {} {} sessions/s: {} ({} of {} seeds meet, {} requests; worst {})", searched.name,
                     searched.steps.size(), step.phase, rate_text(step.rate_per_s), step.meets ? "meets" : "violates",
                     meeting, step.runs.size(), requests, config::join(figures));
}

std::string capacity_table(const CapacityOptions& options, const CapacityResult& result) {
  std::string out =
      fmt::format("{} on {} ({} wafer(s)): capacity under {}, {} seed(s) per step ({}), tolerance {} %\n",
                  result.model_label, result.hardware_label, result.wafers, slo_text(options), result.seeds.size(),
                  seeds_text(result.seeds), config::format_number(options.tolerance * 100));
  for (const ClassCapacity& searched : result.classes) {
    std::vector<Table::Column> columns = {{"step", "", true},
                                          {"phase", "", false},
                                          {"rate", "sessions/s", true},
                                          {"meets", "", false},
                                          {"seeds meeting", "", true}};
    for (const SloBound& bound : options.slo) columns.push_back({bound.key + ", worst seed", "", true});
    Table table(columns);
    for (size_t s = 0; s < searched.steps.size(); ++s) {
      const CapacityStep& step = searched.steps[s];
      size_t meeting = 0;
      for (const SeedRun& run : step.runs) meeting += run.meets ? 1 : 0;
      std::vector<std::string> row = {std::to_string(s + 1), step.phase, rate_text(step.rate_per_s),
                                      step.meets ? "yes" : "no", fmt::format("{}/{}", meeting, step.runs.size())};
      for (size_t b = 0; b < options.slo.size(); ++b) row.push_back(figure_text(worst(step, b)));
      table.add_row(std::move(row));
    }
    out += "\n" + searched.name + fmt::format(" (rate_per_s {} in the file):\n", rate_text(searched.file_rate_per_s)) +
           table.str();
    if (searched.rate_per_s && searched.violating_rate_per_s)
      out += fmt::format("largest rate meeting the SLO: {} sessions/s ({} violates it)\n",
                         rate_text(*searched.rate_per_s), rate_text(*searched.violating_rate_per_s));
    else if (searched.rate_per_s)
      out += fmt::format("every rate tried meets the SLO, up to {} sessions/s (no violation found)\n",
                         rate_text(*searched.rate_per_s));
    else
      out += fmt::format("no rate tried meets the SLO, down to {} sessions/s\n",
                         rate_text(*searched.violating_rate_per_s));
  }
  return out;
}

nlohmann::json capacity_json(const Experiment& experiment, const CapacityOptions& options,
                             const CapacityResult& result) {
  nlohmann::json slo = nlohmann::json::object();
  for (const SloBound& bound : options.slo) slo[bound.key] = bound.limit_ms;
  nlohmann::json classes = nlohmann::json::object();
  auto optional = [](const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
  for (const ClassCapacity& searched : result.classes) {
    nlohmann::json steps = nlohmann::json::array();
    for (const CapacityStep& step : searched.steps) {
      nlohmann::json runs = nlohmann::json::array();
      size_t meeting = 0;
      for (const SeedRun& run : step.runs) {
        nlohmann::json figures = nlohmann::json::object();
        for (size_t b = 0; b < options.slo.size(); ++b) figures[options.slo[b].key] = optional(run.figures_ms[b]);
        runs.push_back({{"seed", run.seed},
                        {"meets", run.meets},
                        {"offered", run.offered},
                        {"completed", run.completed},
                        {"figures_ms", figures}});
        meeting += run.meets ? 1 : 0;
      }
      steps.push_back({{"phase", step.phase},
                       {"rate_per_s", step.rate_per_s},
                       {"meets", step.meets},
                       {"seeds_meeting", meeting},
                       {"runs", runs}});
    }
    classes[searched.name] = {{"file_rate_per_s", searched.file_rate_per_s},
                              {"rate_per_s", optional(searched.rate_per_s)},
                              {"violating_rate_per_s", optional(searched.violating_rate_per_s)},
                              {"steps", steps}};
  }
  return {
      {"capacity", {{"slo", slo}, {"seeds", result.seeds}, {"tolerance", options.tolerance}, {"classes", classes}}},
      {"experiment", {{"model", result.model_label}, {"hardware", result.hardware_label}, {"wafers", result.wafers}}},
      {"config_hash", experiment.config.hash()},
      {"version", version()}};
}

}  // namespace wafersim::reports
