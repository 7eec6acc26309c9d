#pragma once
// `wafersim serve --capacity`: the largest arrival rate of each request class
// that still meets latency SLOs (docs/SERVING.md, "Capacity"). A seeded
// bracketing search (doubling or halving the file's rate until the SLO
// changes side), then bisection to a tolerance; every step runs the serving
// loop once per seed and meets only when every seed does.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim/reports/serve_report.h"

namespace wafersim::reports {

// One bound of --slo on the searched class: `latency`'s `statistic`, in ms.
struct SloBound {
  std::string key;        // "ttft_p99_ms"
  std::string latency;    // ttft | tpot | e2e | queue
  std::string statistic;  // mean | p50 | p90 | p99 | max
  double limit_ms = 0;
};
// "ttft_p99_ms=500,tpot_p99_ms=2"; CommandError (exit 2) naming --slo.
std::vector<SloBound> parse_slo(const std::string& text);

struct CapacityOptions {
  std::vector<SloBound> slo;
  uint32_t seeds = 3;       // runs per step, serving.seed and the next ones; a step meets when every run does
  double tolerance = 0.02;  // bisection ends when the lowest violating rate is within this of the highest meeting
};

struct SeedRun {
  uint64_t seed = 0;
  bool meets = false;
  uint64_t offered = 0, completed = 0;
  std::vector<std::optional<double>> figures_ms;  // one per SLO bound; nullopt without a sample
};

struct CapacityStep {
  std::string phase;  // "bracket" or "bisect"
  double rate_per_s = 0;
  bool meets = false;  // every seed met every bound, with every offered request completed
  std::vector<SeedRun> runs;
};

struct ClassCapacity {
  std::string name;  // realtime | background
  double file_rate_per_s = 0;
  std::optional<double> rate_per_s;            // the largest rate found to meet the SLO
  std::optional<double> violating_rate_per_s;  // the lowest rate found to break it
  std::vector<CapacityStep> steps;
};

struct CapacityResult {
  std::vector<ClassCapacity> classes;  // each class with synthetic requests, searched with the others as in the file
  std::vector<uint64_t> seeds;
  std::string model_label, hardware_label;
  uint32_t wafers = 0;
};

// `load(sets)` is the experiment with `sets` added to the command's --set
// (a step's rate and seed). The serving plan is compiled once, by `compile`,
// as `wafersim serve` compiles it, and every step serves its requests over it
// (serve_experiment, with `backend` and `step_times_path` as serve takes them).
// `progress` is called after each step.
CapacityResult capacity_search(const std::function<Experiment(const std::vector<std::string>&)>& load,
                               const std::function<mapping::Plan(const Experiment&)>& compile,
                               const backend::Backend& backend, const std::string& step_times_path,
                               const CapacityOptions& options,
                               const std::function<void(const ClassCapacity&)>& progress);

nlohmann::json capacity_json(const Experiment& experiment, const CapacityOptions& options,
                             const CapacityResult& result);
std::string capacity_table(const CapacityOptions& options, const CapacityResult& result);
// One line: the step just made.
std::string capacity_step_line(const CapacityOptions& options, const ClassCapacity& searched);

}  // namespace wafersim::reports
