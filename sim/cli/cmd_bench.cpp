// `wafersim bench engine`: builds the mesh for a whole wafer and drives
// synthetic traffic through it, to measure the engine itself.
// `wafersim bench parallelism`: runs an experiment's decode (or prefill) on the
// engine and measures how much of it a parallel band engine could overlap.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "models/config/config.h"
#include "models/hardware.h"
#include "sim/cli/commands.h"
#include "sim/engine/engine.h"
#include "sim/engine/parallelism_profile.h"
#include "sim/engine/synthetic_traffic.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/process_memory.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

namespace wafersim::cli {

namespace {

struct BenchOptions {
  std::string grid;  // "WxH"; empty = the preset's grid
  std::string traffic = "neighbour";
  uint64_t events = 0;  // 0 = a default per traffic
  std::string hardware = "wse3";
  uint64_t seed = 1;
  uint32_t bands = 0;
  bool no_contention = false;
  CommonOptions common;
};

void apply_grid(const std::string& grid, HardwareSpec& hw) {
  unsigned width = 0, height = 0;
  char tail = 0;
  if (std::sscanf(grid.c_str(), "%ux%u%c", &width, &height, &tail) != 2 || width == 0 || height == 0 || width > 65535 ||
      height > 65535)
    throw CommandError(kExitBadInput, fmt::format("--grid '{}': expected WIDTHxHEIGHT, e.g. 762x1176", grid));
  hw.grid_width = width;
  hw.grid_height = height;
}

std::string millions(double value) { return fmt::format("{:.1f}", value / 1e6); }

void bench_engine(const BenchOptions& options) {
  const sim::TrafficKind* traffic = sim::find_traffic(options.traffic);
  if (traffic == nullptr)
    throw CommandError(kExitBadInput,
                       fmt::format("--traffic '{}': expected {}", options.traffic, sim::traffic_names(", ")));
  // --set may name hardware parameters only: nothing else is read here.
  HardwareSpec hw = hardware_from_config(load_hardware_config(options.hardware, options.common.sets, "--hardware"));
  if (!options.grid.empty()) apply_grid(options.grid, hw);
  if (hw.grid_width < traffic->min_grid_width)
    throw CommandError(kExitBadInput, fmt::format("--traffic {} needs rows of at least {} tiles", traffic->name,
                                                  traffic->min_grid_width));

  sim::TrafficSpec spec;
  spec.traffic = traffic->name;
  spec.grid_width = hw.grid_width;
  spec.grid_height = hw.grid_height;
  spec.seed = options.seed;
  spec.events = options.events != 0 ? options.events : traffic->default_events_per_tile * hw.tiles_per_wafer();
  const sim::SyntheticTraffic synthetic = sim::make_traffic(spec);

  sim::EngineOptions engine;
  engine.contention = !options.no_contention;
  engine.bands = options.bands;
  if (!options.common.quiet)
    engine.progress = [](const sim::EngineProgress& p) {
      std::cerr << fmt::format("  {:.1f} s: cycle {}, {} M events, {}/{} tiles done\n", p.seconds, p.cycle,
                               p.events / 1000000, p.tiles_finished, p.tiles_active);
    };
  const sim::SteadyInputs inputs;
  const sim::EngineResult result = sim::run_programs(hw, synthetic.programs, inputs, engine);
  const uint64_t peak_rss = peak_rss_bytes();

  const double run = result.run_seconds > 0 ? result.run_seconds : 1e-9;
  const double events_per_second = double(result.events) / run;
  const double hops_per_second = double(result.link_hops) / run;
  const double rss_per_tile = double(peak_rss) / double(result.tiles_simulated);
  if (!options.common.quiet) {
    std::ostream& out = options.common.table_out();
    out << fmt::format("bench engine: {} traffic on {} ({}x{} tiles), {} iteration(s), contention {}\n", traffic->name,
                       hw.name, hw.grid_width, hw.grid_height, synthetic.programs.iterations,
                       engine.contention ? "on" : "off");
    Table table({{"figure", ""}, {"value", "", true}, {"unit", ""}});
    table.add_row({"tiles", std::to_string(result.tiles_simulated), "tiles"});
    table.add_row({"build time", fmt::format("{:.2f}", result.build_seconds), "s"});
    table.add_row({"run time", fmt::format("{:.2f}", result.run_seconds), "s"});
    table.add_row({"events", std::to_string(result.events), "events"});
    table.add_row({"event rate", millions(events_per_second), "M events/s"});
    table.add_row({"link hops", std::to_string(result.link_hops), "hops"});
    table.add_row({"link hop rate", millions(hops_per_second), "M hops/s"});
    table.add_row({"simulated time", std::to_string(result.end_cycle), "cycles"});
    table.add_row({"peak memory", fmt::format("{:.1f}", double(peak_rss) / (1 << 20)), "MiB"});
    table.add_row({"memory per tile", fmt::format("{:.0f}", rss_per_tile), "B/tile"});
    table.add_row({"link busy (mean)", fmt::format("{:.3f}", result.link_busy_mean), "fraction of cycles"});
    out << table.str();
  }
  if (!options.common.json_path.empty())
    write_json(options.common.json_path, {{"version", version()},
                                          {"hardware", hw.name},
                                          {"traffic", traffic->name},
                                          {"grid_width", hw.grid_width},
                                          {"grid_height", hw.grid_height},
                                          {"contention", engine.contention},
                                          {"iterations", synthetic.programs.iterations},
                                          {"tiles", result.tiles_simulated},
                                          {"build_seconds", result.build_seconds},
                                          {"run_seconds", result.run_seconds},
                                          {"events", result.events},
                                          {"events_per_second", events_per_second},
                                          {"link_hops", result.link_hops},
                                          {"link_hops_per_second", hops_per_second},
                                          {"end_cycle", result.end_cycle},
                                          {"link_busy_mean", result.link_busy_mean},
                                          {"link_busy_peak", result.link_busy_peak},
                                          {"peak_rss_bytes", peak_rss},
                                          {"rss_bytes_per_tile", rss_per_tile}});
}

struct ParallelismOptions {
  ExperimentOptions experiment;
  bool prefill = false;
};

// Barriers timed per thread count: enough rounds for a stable mean, few enough to take well under a second.
constexpr uint64_t kBarrierRounds = 200000;

void bench_parallelism(const ParallelismOptions& options) {
  const Experiment experiment = load_experiment(options.experiment.file, options.experiment.common.sets);
  const CommonOptions& common = options.experiment.common;
  if (!common.json_path.empty()) check_writable(common.json_path);
  mapping::Plan plan = compile_plan(experiment);
  if (options.prefill) {
    if (!experiment.workload.prefill)
      throw CommandError(
          kExitBadInput,
          fmt::format("--prefill: {} has workload.prefill false, no prefill to profile",
                      options.experiment.file.empty() ? std::string(kDefaultExperimentName) : options.experiment.file));
    plan = mapping::compile_prefill_plan(plan);
  }
  const workloads::DecodeInputs decode_inputs(experiment.model, experiment.workload);
  const workloads::PrefillInputs prefill_inputs(experiment.workload);
  const IterationInputs& inputs = options.prefill ? static_cast<const IterationInputs&>(prefill_inputs) : decode_inputs;

  sim::EngineOptions engine;
  engine.contention = experiment.sim.contention;
  engine.exact_detours = experiment.sim.exact_detours;
  engine.bands = experiment.sim.bands;
  engine.parallelism_profile = true;
  if (!common.quiet)
    engine.progress = [](const sim::EngineProgress& p) {
      std::cerr << fmt::format("  {:.1f} s: cycle {}, {} M events\n", p.seconds, p.cycle, p.events / 1000000);
    };
  const sim::EngineResult result = sim::run_programs(plan.hw, plan.programs, inputs, engine);
  const sim::ParallelismProfile& profile = result.parallelism;

  // Measured only up to the machine's cores: spinning threads sharing a core
  // would time the scheduler, not the barrier. Beyond, the largest measured
  // cost stands in, as a lower bound.
  const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::map<uint32_t, double> barriers;  // threads -> seconds per barrier
  uint32_t barrier_threads = 1;
  for (uint32_t threads = 2; threads <= cores && threads <= 1024; threads *= 2) {
    barriers[threads] = sim::barrier_seconds(threads, kBarrierRounds);
    barrier_threads = threads;
  }
  auto barrier_of = [&](uint32_t threads) {
    if (threads < 2) return 0.0;
    const auto at = barriers.upper_bound(threads);
    return at == barriers.begin() ? 0.0 : std::prev(at)->second;
  };

  std::map<uint32_t, double> handoffs;  // messages per window -> seconds per message
  auto handoff_of = [&](uint32_t batch) {
    auto [at, added] = handoffs.try_emplace(batch, 0.0);
    if (added) at->second = sim::handoff_seconds(batch, std::max<uint64_t>(kBarrierRounds / batch, 1000));
    return at->second;
  };

  nlohmann::json splits = nlohmann::json::array();
  Table table({{"tiles split by", ""},
               {"threads", "", true},
               {"critical events", "", true},
               {"event bound", "", true},
               {"critical wake time", "", true},
               {"barriers", "", true},
               {"cross-thread messages", "", true},
               {"hand-offs", "", true},
               {"projected speed-up", "", true}});
  const double serial_seconds = result.run_seconds;
  const double scheduler_seconds = std::max(0.0, serial_seconds - profile.wake_seconds);
  for (const sim::ParallelismSplit& split : profile.splits) {
    const bool timed = split.partition == sim::Partition::Bands;
    const double event_share = profile.events > 0 ? double(split.critical_events) / double(profile.events) : 1.0;
    // Interleaved splits are counted in events only: their wake time is the events' share of it.
    const double critical_seconds = timed ? split.critical_seconds : profile.wake_seconds * event_share;
    const double barriers_seconds = double(profile.windows) * barrier_of(split.threads);
    // Each thread hands its share of the cross-thread messages on, all threads at once.
    const double per_thread = double(split.cross_thread_messages) / double(split.threads);
    const uint32_t batch =
        uint32_t(std::clamp(std::ceil(per_thread / double(std::max<uint64_t>(profile.windows, 1))), 1.0, 65536.0));
    const double handoff = split.threads > 1 && cores > 1 ? handoff_of(batch) : 0.0;
    const double messages_seconds = per_thread * handoff;
    const double parallel_seconds = critical_seconds + scheduler_seconds + barriers_seconds + messages_seconds;
    const double projected = parallel_seconds > 0 ? serial_seconds / parallel_seconds : 1;
    const double event_bound = event_share > 0 ? 1 / event_share : 1;
    table.add_row({sim::partition_name(split.partition), std::to_string(split.threads),
                   std::to_string(split.critical_events), fmt::format("{:.2f}x", event_bound),
                   fmt::format("{:.2f} s{}", critical_seconds, timed ? "" : " (from events)"),
                   fmt::format("{:.2f} s", barriers_seconds), std::to_string(split.cross_thread_messages),
                   fmt::format("{:.2f} s", messages_seconds), fmt::format("{:.2f}x", projected)});
    nlohmann::json row = {{"partition", sim::partition_name(split.partition)},
                          {"threads", split.threads},
                          {"critical_events", split.critical_events},
                          {"event_bound_speedup", event_bound},
                          {"critical_wake_seconds", critical_seconds},
                          {"critical_wake_seconds_timed", timed},
                          {"barrier_seconds_each", barrier_of(split.threads)},
                          {"barriers_seconds", barriers_seconds},
                          {"cross_thread_messages", split.cross_thread_messages},
                          {"handoff_seconds_each", handoff},
                          {"handoffs_seconds", messages_seconds},
                          {"projected_speedup", projected}};
    splits.push_back(std::move(row));
  }
  nlohmann::json barrier_json = nlohmann::json::object();
  for (const auto& [threads, seconds] : barriers) barrier_json[std::to_string(threads)] = seconds;
  if (!common.quiet) {
    std::ostream& out = common.table_out();
    out << fmt::format(
        "bench parallelism: {} of {} on {} ({} band(s), contention {}), {} events, {} cycles\n"
        "  run {:.2f} s: {:.2f} s in the bands' wake-ups, {:.2f} s in SystemC's scheduler; {} windows of {} "
        "cycle(s) (least cycles a message took: {}); a barrier of {} threads {:.0f} ns (more threads: "
        "at least that)\n",
        options.prefill ? "the prefill" : "the decode", experiment.model.name, plan.hw.name, profile.band_events.size(),
        engine.contention ? "on" : "off", profile.events, result.end_cycle, serial_seconds, profile.wake_seconds,
        scheduler_seconds, profile.windows, profile.window_cycles,
        profile.least_message_cycles == UINT64_MAX ? std::string("no message")
                                                   : std::to_string(profile.least_message_cycles),
        barrier_threads, barrier_of(barrier_threads) * 1e9);
    out << table.str();
  }
  if (!common.json_path.empty())
    write_json(common.json_path, {{"version", version()},
                                  {"phase", options.prefill ? "prefill" : "decode"},
                                  {"model", experiment.model.name},
                                  {"hardware", plan.hw.name},
                                  {"contention", engine.contention},
                                  {"bands", profile.band_events.size()},
                                  {"events", profile.events},
                                  {"end_cycle", result.end_cycle},
                                  {"run_seconds", serial_seconds},
                                  {"wake_seconds", profile.wake_seconds},
                                  {"scheduler_seconds", scheduler_seconds},
                                  {"window_cycles", profile.window_cycles},
                                  {"windows", profile.windows},
                                  {"least_message_cycles", profile.least_message_cycles == UINT64_MAX
                                                               ? nlohmann::json()
                                                               : nlohmann::json(profile.least_message_cycles)},
                                  {"band_events", profile.band_events},
                                  {"splits", splits},
                                  {"barrier_seconds", barrier_json},
                                  {"peak_rss_bytes", peak_rss_bytes()}});
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Measure the simulator itself");
  bench->require_subcommand(1);
  auto options = std::make_shared<BenchOptions>();
  CLI::App* engine = bench->add_subcommand("engine", "Build the mesh and drive synthetic traffic through it");
  engine->add_option("--grid", options->grid, "Tiles WIDTHxHEIGHT (default: the preset's grid)");
  engine->add_option("--traffic", options->traffic, sim::traffic_names(" | "))->capture_default_str();
  engine->add_option("--events", options->events, "Events to simulate, about (default: per traffic)");
  engine->add_option("--hardware", options->hardware, "Hardware preset")->capture_default_str();
  engine->add_option("--seed", options->seed, "Seed of the random traffic")->capture_default_str();
  engine->add_option("--bands", options->bands, "Engine bands of whole rows (0 = auto)")->capture_default_str();
  engine->add_flag("--no-contention", options->no_contention, "Closed-form timing: links never serialise");
  add_common_options(*engine, options->common);
  engine->callback([options] { bench_engine(*options); });

  auto parallelism = std::make_shared<ParallelismOptions>();
  CLI::App* profile = bench->add_subcommand(
      "parallelism", "Run an experiment's decode on the engine and measure what a parallel band engine could overlap");
  add_experiment_options(*profile, parallelism->experiment);
  profile->add_flag("--prefill", parallelism->prefill, "Profile the prefill's simulation instead of the decode's");
  profile->callback([parallelism] { bench_parallelism(*parallelism); });
}

}  // namespace wafersim::cli
