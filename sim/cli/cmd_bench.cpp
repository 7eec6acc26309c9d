// `wafersim bench engine`: builds the mesh for a whole wafer and drives
// synthetic traffic through it, to measure the engine itself.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "models/config/config.h"
#include "models/hardware.h"
#include "sim/cli/commands.h"
#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "sim/experiment/process_memory.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"

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

  add_bench_parallelism_command(*bench);
}

}  // namespace wafersim::cli
