// wafersim map: compile an experiment and report the plan.
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "mapping/plan.h"
#include "models/config/error.h"
#include "sim/cli/commands.h"
#include "sim/cli/heatmaps.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/version.h"
#include "sim/reports/compile.h"
#include "sim/reports/config_json.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"
#include "sim/reports/speculative_map.h"

namespace wafersim::cli {

namespace {

void map(const ExperimentOptions& options, const std::string& heatmaps) {
  const Experiment experiment = load_experiment(options.file, options.common.sets);
  if (!options.common.json_path.empty()) check_writable(options.common.json_path);
  if (!heatmaps.empty()) check_writable_folder(heatmaps, kHeatmapFileSuffixes);
  const auto begin = std::chrono::steady_clock::now();
  const mapping::Plan plan = compile_or_record_refusal(experiment, options.common.json_path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const Report report = map_report(experiment, plan, seconds);
  if (!options.common.quiet) options.common.table_out() << report.table;
  if (!heatmaps.empty()) write_heatmaps(heatmaps, plan, nullptr);
  if (!options.common.json_path.empty()) write_json(options.common.json_path, report.document);
}

}  // namespace

void add_map_command(CLI::App& app) {
  auto options = std::make_shared<ExperimentOptions>();
  CLI::App* command = app.add_subcommand("map", "Compile an experiment onto the wafer(s) and report the plan");
  auto heatmaps = std::make_shared<std::string>();
  add_experiment_options(*command, *options);
  add_folder_option(*command, "--heatmaps", *heatmaps,
                    "Write the plan's per-tile arrays (SRAM, region ids) of every wafer as .npy files to DIR");
  command->callback([options, heatmaps] { map(*options, *heatmaps); });
}

}  // namespace wafersim::cli
