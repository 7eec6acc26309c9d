// `wafersim bench parallelism`: runs an experiment's decode (or prefill) on
// the engine with its parallelism profile, times a barrier and a message
// hand-off on this machine's cores, and projects what a parallel engine could
// gain per split of the tiles (docs/ARCHITECTURE.md, 6.2).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "mapping/plan.h"
#include "mapping/programs.h"
#include "models/cycle_limit.h"
#include "sim/backend/backend.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress_line.h"
#include "sim/engine/parallelism_profile.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/process_memory.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

namespace wafersim::cli {

namespace {

struct ParallelismOptions {
  ExperimentOptions experiment;
  bool prefill = false;
};

// Barriers timed per thread count: enough rounds for a stable mean, few enough to take well under a second.
constexpr uint64_t kBarrierRounds = 200000;

// What synchronising costs on this machine, timed when first asked. Barriers
// are timed only up to the machine's cores (spinning threads sharing a core
// would time the scheduler); beyond, the largest timed stands in, as a lower bound.
class MachineCosts {
 public:
  MachineCosts() : cores_(std::max(1u, std::thread::hardware_concurrency())) {
    for (uint32_t threads = 2; threads <= cores_ && threads <= 1024; threads *= 2)
      barriers_[threads] = sim::barrier_seconds(threads, kBarrierRounds);
  }
  uint32_t largest_timed() const { return barriers_.empty() ? 1 : barriers_.rbegin()->first; }
  double barrier_seconds(uint32_t threads) const {
    if (threads < 2) return 0;
    const auto at = barriers_.upper_bound(threads);
    return at == barriers_.begin() ? 0.0 : std::prev(at)->second;
  }
  // Per message, with `batch` messages a window; nothing on a single core.
  double handoff_seconds(uint32_t batch) {
    if (cores_ < 2) return 0;
    auto [at, added] = handoffs_.try_emplace(batch, 0.0);
    if (added) at->second = sim::handoff_seconds(batch, std::max<uint64_t>(kBarrierRounds / batch, 1000));
    return at->second;
  }
  const std::map<uint32_t, double>& barriers() const { return barriers_; }

 private:
  uint32_t cores_;
  std::map<uint32_t, double> barriers_;  // threads -> seconds per barrier
  std::map<uint32_t, double> handoffs_;  // messages per window -> seconds per message
};

// One split's projection: the serial run against its busiest threads, barriers and hand-offs.
struct Projection {
  double event_bound = 1;       // events over the busiest threads' events
  double critical_seconds = 0;  // the busiest threads' wake-up time (timed for bands, else the events' share)
  double barrier_each = 0, barriers_seconds = 0;
  double handoff_each = 0, handoffs_seconds = 0;
  double speedup = 1;
};

Projection project(const sim::ParallelismProfile& profile, const sim::ParallelismSplit& split, MachineCosts& costs) {
  Projection p;
  const double event_share = profile.events > 0 ? double(split.critical_events) / double(profile.events) : 1.0;
  p.event_bound = event_share > 0 ? 1 / event_share : 1;
  p.critical_seconds =
      split.partition == sim::Partition::Bands ? split.critical_seconds : profile.wake_seconds * event_share;
  p.barrier_each = costs.barrier_seconds(split.threads);
  p.barriers_seconds = double(profile.windows) * p.barrier_each;
  if (split.threads > 1) {
    // Each thread hands its share of the messages between threads on, all threads at once.
    const double per_thread = double(split.cross_thread_messages) / double(split.threads);
    const double batch = std::ceil(per_thread / double(std::max<uint64_t>(profile.windows, 1)));
    p.handoff_each = costs.handoff_seconds(uint32_t(std::clamp(batch, 1.0, 65536.0)));
    p.handoffs_seconds = per_thread * p.handoff_each;
  }
  const double scheduler_seconds = std::max(0.0, profile.run_seconds - profile.wake_seconds);
  const double parallel_seconds = p.critical_seconds + scheduler_seconds + p.barriers_seconds + p.handoffs_seconds;
  p.speedup = parallel_seconds > 0 ? profile.run_seconds / parallel_seconds : 1;
  return p;
}

void bench_parallelism(const ParallelismOptions& options) {
  const CommonOptions& common = options.experiment.common;
  const Experiment experiment = load_experiment(options.experiment.file, common.sets);
  if (options.prefill && !experiment.workload.prefill)
    throw CommandError(kExitBadInput, fmt::format("--prefill: {} has workload.prefill false, no prefill to profile",
                                                  options.experiment.file.empty() ? std::string(kDefaultExperimentName)
                                                                                  : options.experiment.file));
  if (!common.json_path.empty()) check_writable(common.json_path);
  mapping::Plan plan = compile_plan(experiment);
  if (options.prefill) plan = mapping::compile_prefill_plan(plan);
  mapping::release_program_sources(plan);
  const workloads::DecodeInputs decode_inputs(experiment.model, experiment.workload);
  const workloads::PrefillInputs prefill_inputs(plan.workload);  // the prefill plan's chunks
  const IterationInputs& inputs = options.prefill ? static_cast<const IterationInputs&>(prefill_inputs) : decode_inputs;

  SimOptions sim = experiment.sim;
  sim.parallelism_profile = true;
  ProgressLine line;
  backend::ProgressFn progress;
  if (!common.quiet)
    progress = [&](const backend::Progress& p) {
      line.show(fmt::format("{:.1f} s: {}/{} {}, {:.1f} M events/s", p.wall_seconds, p.tokens_done, p.tokens_total,
                            options.prefill ? "prefill chunks" : p.unit, p.events_per_second / 1e6));
    };
  backend::Evaluation evaluation;
  try {
    evaluation = backend::make_backend("sim")->evaluate(plan, inputs, sim, progress);
  } catch (const CycleLimitError& error) {
    line.end();
    refuse_too_long(experiment, error.what());
  }
  line.end();
  const sim::ParallelismProfile& profile = *evaluation.figures.parallelism;

  MachineCosts costs;
  Table table({{"tiles split by", ""},
               {"threads", "", true},
               {"critical events", "", true},
               {"event bound", "", true},
               {"critical wake time", "", true},
               {"barriers", "", true},
               {"cross-thread messages", "", true},
               {"hand-offs", "", true},
               {"projected speed-up", "", true}});
  nlohmann::json splits = nlohmann::json::array();
  for (const sim::ParallelismSplit& split : profile.splits) {
    const Projection p = project(profile, split, costs);
    const bool timed = split.partition == sim::Partition::Bands;
    table.add_row({sim::partition_name(split.partition), std::to_string(split.threads),
                   std::to_string(split.critical_events), fmt::format("{:.2f}x", p.event_bound),
                   fmt::format("{:.2f} s{}", p.critical_seconds, timed ? "" : " (from events)"),
                   fmt::format("{:.2f} s", p.barriers_seconds), std::to_string(split.cross_thread_messages),
                   fmt::format("{:.2f} s", p.handoffs_seconds), fmt::format("{:.2f}x", p.speedup)});
    splits.push_back({{"partition", sim::partition_name(split.partition)},
                      {"threads", split.threads},
                      {"critical_events", split.critical_events},
                      {"event_bound_speedup", p.event_bound},
                      {"critical_wake_seconds", p.critical_seconds},
                      {"critical_wake_seconds_timed", timed},
                      {"barrier_seconds_each", p.barrier_each},
                      {"barriers_seconds", p.barriers_seconds},
                      {"cross_thread_messages", split.cross_thread_messages},
                      {"handoff_seconds_each", p.handoff_each},
                      {"handoffs_seconds", p.handoffs_seconds},
                      {"projected_speedup", p.speedup}});
  }
  const double scheduler_seconds = std::max(0.0, profile.run_seconds - profile.wake_seconds);
  const nlohmann::json least_message =
      profile.least_message_cycles == UINT64_MAX ? nlohmann::json() : nlohmann::json(profile.least_message_cycles);
  if (!common.quiet) {
    common.table_out() << fmt::format(
        "bench parallelism: {} of {} on {} ({} band(s), contention {}), {} events\n"
        "  run {:.2f} s: {:.2f} s in the bands' wake-ups, {:.2f} s in SystemC's scheduler; {} windows of {} "
        "cycle(s) (least cycles a message took: {}); a barrier of {} threads {:.0f} ns (more threads: at least "
        "that)\n",
        options.prefill ? "the prefill" : "the decode", experiment.model.name, plan.hw.name, profile.band_events.size(),
        sim.contention ? "on" : "off", profile.events, profile.run_seconds, profile.wake_seconds, scheduler_seconds,
        profile.windows, profile.window_cycles, least_message.is_null() ? "no message" : least_message.dump(),
        costs.largest_timed(), costs.barrier_seconds(costs.largest_timed()) * 1e9);
    common.table_out() << table.str();
  }
  if (common.json_path.empty()) return;
  nlohmann::json barriers = nlohmann::json::object();
  for (const auto& [threads, seconds] : costs.barriers()) barriers[std::to_string(threads)] = seconds;
  write_json(common.json_path, {{"version", version()},
                                {"phase", options.prefill ? "prefill" : "decode"},
                                {"model", experiment.model.name},
                                {"hardware", plan.hw.name},
                                {"contention", sim.contention},
                                {"bands", profile.band_events.size()},
                                {"events", profile.events},
                                {"run_seconds", profile.run_seconds},
                                {"wake_seconds", profile.wake_seconds},
                                {"scheduler_seconds", scheduler_seconds},
                                {"window_cycles", profile.window_cycles},
                                {"windows", profile.windows},
                                {"least_message_cycles", least_message},
                                {"band_events", profile.band_events},
                                {"splits", splits},
                                {"barrier_seconds", barriers},
                                {"peak_rss_bytes", peak_rss_bytes()}});
}

}  // namespace

void add_bench_parallelism_command(CLI::App& bench) {
  auto options = std::make_shared<ParallelismOptions>();
  CLI::App* command = bench.add_subcommand(
      "parallelism", "Run an experiment's decode on the engine and measure what a parallel engine could overlap");
  add_experiment_options(*command, options->experiment);
  command->add_flag("--prefill", options->prefill, "Profile the prefill's simulation instead of the decode's");
  command->callback([options] { bench_parallelism(*options); });
}

}  // namespace wafersim::cli
