// wafersim run: simulate the planned decode on every tile of the wafer(s).
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "mapping/decode_inputs.h"
#include "mapping/experiment.h"
#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/cli/commands.h"
#include "sim/cli/decode_report.h"
#include "sim/cli/output.h"
#include "sim/engine/decode.h"

namespace wafersim::cli {

namespace {

void run(const ExperimentOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  const mapping::Experiment experiment = mapping::load_experiment(options.file, options.common.sets);
  const mapping::Plan plan = mapping::compile_plan(experiment);
  const mapping::DecodeInputs inputs(experiment.model, experiment.workload);

  sim::EngineOptions engine;
  engine.contention = experiment.sim.contention;
  engine.regions = experiment.sim.regions;
  engine.progress_seconds = experiment.sim.progress_seconds;
  const uint64_t tokens = plan.programs.iterations;
  if (!options.common.quiet)
    engine.progress = [&](const sim::Progress& progress) {
      std::cerr << fmt::format("\r{:.1f} s: {}/{} tokens, {:.3f} ms simulated, {:.1f} M events/s   ",
                               progress.seconds, progress.final_marks, tokens,
                               plan.hw.cycles_to_us(double(progress.cycle)) / 1e3,
                               progress.seconds > 0 ? double(progress.events) / progress.seconds / 1e6 : 0.0)
                << std::flush;
    };
  const sim::DecodeRun run = sim::simulate_decode(plan, inputs, engine);
  const sim::EngineResult& result = run.engine;
  if (engine.progress && result.run_seconds >= engine.progress_seconds) std::cerr << "\n";

  const mapping::DecodeMetrics metrics = mapping::decode_metrics(plan, run.timeline);
  RunFigures figures;
  figures.engine = "sim";
  figures.compute_busy_mean = result.compute_busy_mean;
  figures.compute_busy_peak = result.compute_busy_peak;
  figures.link_busy_mean = result.link_busy_mean;
  figures.link_busy_peak = result.link_busy_peak;
  figures.tiles_simulated = result.tiles_simulated;
  figures.events = result.events;
  figures.link_hops = result.link_hops;
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  figures.peak_rss_bytes = result.peak_rss_bytes;
  if (!options.common.quiet) std::cout << decode_table(plan, metrics, figures);
  if (!options.common.json_path.empty())
    write_json(options.common.json_path, decode_json(experiment, plan, metrics, figures));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<ExperimentOptions>();
  CLI::App* command =
      app.add_subcommand("run", "Simulate the decode on every tile of the wafer(s): tokens/s and per-token latency");
  add_experiment_options(*command, *options);
  command->callback([options] { run(*options); });
}

}  // namespace wafersim::cli
