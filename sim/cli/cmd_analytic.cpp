// wafersim analytic: the closed-form latency of the same plan `run` simulates.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "mapping/decode_inputs.h"
#include "mapping/experiment.h"
#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/cli/commands.h"
#include "sim/cli/decode_report.h"
#include "sim/cli/output.h"
#include "sim/engine/engine.h"

namespace wafersim::cli {

namespace {

void analytic(const ExperimentOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  const mapping::Experiment experiment = mapping::load_experiment(options.file, options.common.sets);
  const mapping::Plan plan = mapping::compile_plan(experiment);
  const mapping::DecodeInputs inputs(experiment.model, experiment.workload);
  const mapping::DecodeTimeline timeline = mapping::analytic_timeline(plan, inputs);
  const mapping::DecodeMetrics metrics = mapping::decode_metrics(plan, timeline);
  RunFigures figures;
  figures.engine = "analytic";
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  figures.peak_rss_bytes = sim::peak_rss_bytes();
  // Where a region's time goes, step by step, for the first token: one region of each kind.
  nlohmann::json steps = nlohmann::json::object();
  Table table({{"region", "", false}, {"step", "", false}, {"cycles", "", true}});
  std::vector<mapping::RegionKind> shown;
  for (const mapping::Region& region : plan.regions) {
    if (std::find(shown.begin(), shown.end(), region.kind) != shown.end()) continue;
    shown.push_back(region.kind);
    for (const auto& [label, cycles] : region.step_cycles(inputs, 0)) {
      steps[region.name].push_back({{"step", label}, {"cycles", cycles}});
      table.add_row({region.name, label, std::to_string(cycles)});
    }
  }
  if (!options.common.quiet) std::cout << decode_table(plan, metrics, figures) << "\nsteps of the first token:\n" << table.str();
  if (!options.common.json_path.empty()) {
    nlohmann::json document = decode_json(experiment, plan, metrics, figures);
    document["metrics"]["steps"] = steps;
    write_json(options.common.json_path, document);
  }
}

}  // namespace

void add_analytic_command(CLI::App& app) {
  auto options = std::make_shared<ExperimentOptions>();
  CLI::App* command = app.add_subcommand(
      "analytic", "Closed-form (contention-free) tokens/s and per-token latency of the plan `run` simulates");
  add_experiment_options(*command, *options);
  command->callback([options] { analytic(*options); });
}

}  // namespace wafersim::cli
