// wafersim run | analytic: one path from an experiment to its decode results,
// through the backend the command names.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mapping/programs.h"
#include "sim/backend/backend.h"
#include "sim/cli/commands.h"
#include "sim/cli/csv_tables.h"
#include "sim/cli/heatmaps.h"
#include "sim/cli/progress_line.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"
#include "sim/experiment/process_memory.h"
#include "sim/reports/compile.h"
#include "sim/reports/decode_report.h"
#include "sim/reports/decode_run.h"
#include "sim/reports/explain.h"
#include "sim/reports/functional_check.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"

namespace wafersim::cli {

namespace {

// Folders of output files besides --json and --trace, and --explain.
struct OutputFolders {
  std::string csv, heatmaps;
  bool explain = false;
};

// Every output path, before an hour of simulation could end in a write that fails.
void check_outputs(const ExperimentOptions& options, const TraceOptions& trace, const OutputFolders& folders) {
  if (!options.common.json_path.empty()) check_writable(options.common.json_path);
  if (!trace.path.empty()) check_writable(trace.path);
  if (!folders.csv.empty()) check_writable_folder(folders.csv, kCsvFileSuffixes);
  if (!folders.heatmaps.empty()) check_writable_folder(folders.heatmaps, kHeatmapFileSuffixes);
}

// --quiet hides the table; with no output file either, the figures computed
// would show nowhere, and a command that silently shows nothing looks broken.
// A warning (not a refusal): the exit status alone (fits, numbers agree) is
// what some scripts ask for. Given after the work, so a failure stays one line.
void warn_if_nothing_shown(const ExperimentOptions& options, const TraceOptions& trace, const OutputFolders& folders,
                           const std::string& backend_name) {
  if (!options.common.quiet || !options.common.json_path.empty() || !trace.path.empty() || !folders.csv.empty() ||
      !folders.heatmaps.empty())
    return;
  std::cerr << "warning: --quiet without --json, --csv or --trace" << (backend_name == "sim" ? " or --heatmaps" : "")
            << " shows no result, only the exit status (0: it fits and ran)\n";
}

// A plan whose power passes its systems' rating: one line on stderr per
// phase, beside the JSON's exceeds_rated_power.
void warn_if_over_rating(const nlohmann::json& document) {
  for (const auto& [phase, where] :
       {std::pair<const char*, const char*>{"decode", "/metrics/energy"}, {"prefill", "/metrics/prefill/energy"}}) {
    const nlohmann::json::json_pointer pointer(where);
    if (!document.contains(pointer) || document.at(pointer).value("exceeds_rated_power", nlohmann::json()) != true)
      continue;
    const nlohmann::json& energy = document.at(pointer);
    std::cerr << fmt::format(
        "warning: the {}'s peak power, {:.1f} kW (average {:.1f} kW), exceeds the systems' rated {:.1f} kW "
        "(hardware.energy.rated_power_watts)\n",
        phase, energy.at("peak_power_watts").get<double>() / 1e3, energy.at("average_power_watts").get<double>() / 1e3,
        energy.at("rated_power_watts").get<double>() / 1e3);
  }
}

void evaluate_decode(const ExperimentOptions& options, const TraceOptions& trace, const OutputFolders& folders,
                     const std::string& backend_name) {
  const auto begin = std::chrono::steady_clock::now();
  const Experiment experiment = load_experiment(options.file, options.common.sets);
  refuse_impossible_functional_check(experiment);  // input first, as validate checks it
  check_outputs(options, trace, folders);
  mapping::Plan plan = compile_or_record_refusal(experiment, options.common.json_path);
  // The programs are built: their sources would sit beside the engine's tile state for the whole run.
  mapping::release_program_sources(plan);

  ProgressLine line;
  std::string unit;  // a new phase (prefill chunks, then decode tokens) always gets its first line
  backend::ProgressFn progress;
  if (!options.common.quiet)
    progress = [&](const backend::Progress& p) {
      const bool new_phase = unit != p.unit;
      unit = p.unit;
      const std::string eta = eta_text(p.wall_seconds, double(p.tokens_done), double(p.tokens_total));
      line.show(p.closed_form ? fmt::format("{:.1f} s: {}/{} {} in closed form, {}", p.wall_seconds, p.tokens_done,
                                            p.tokens_total, p.unit, eta)
                              : fmt::format("{:.1f} s: {}/{} {}, {:.3f} ms simulated, {:.1f} M events/s, {}",
                                            p.wall_seconds, p.tokens_done, p.tokens_total, p.unit, p.simulated_us / 1e3,
                                            p.events_per_second / 1e6, eta),
                new_phase);
    };
  Report report;
  try {
    report = decode_report(experiment, plan, backend_name, progress, begin,
                           trace.path.empty() ? nullptr : &trace.window, !folders.heatmaps.empty());
  } catch (const CycleLimitError& error) {
    line.end();
    refuse_too_long(experiment, error.what());
  }
  line.end();
  if (folders.explain) {
    // What-ifs by the closed form; its progress keeps the line the run used.
    std::function<void(const std::string&)> explain_progress;
    if (!options.common.quiet) explain_progress = [&](const std::string& text) { line.show(text, false); };
    report.document["explain"] = explain_decode(experiment, plan, report.document, explain_progress);
    line.end();
    report.table += explain_table(report.document["explain"]);
  }
  if (!options.common.quiet) options.common.table_out() << report.table;
  warn_if_over_rating(report.document);
  const nlohmann::json& prefill = report.document.at("metrics").value("prefill", nlohmann::json());
  if (prefill.is_object())
    warn_if_prefill_overflows(prefill.at("chunk_tokens"), prefill.at("sram_peak_bytes"), plan.hw.tile.sram_bytes);
  if (!trace.path.empty()) write_text_atomically(trace.path, report.trace.dump() + "\n");
  if (!folders.heatmaps.empty()) write_heatmaps(folders.heatmaps, plan, report.tiles.get());
  if (!folders.csv.empty()) write_csv_tables(folders.csv, report.document);
  if (!options.common.json_path.empty()) write_json(options.common.json_path, report.document);
  const std::string numbers_diverge = functional_failure(report);
  if (!numbers_diverge.empty()) throw CommandError(kExitNumbersDiverge, numbers_diverge);
  warn_if_nothing_shown(options, trace, folders, backend_name);
}

void add_decode_command(CLI::App& app, const std::string& name, const std::string& backend_name,
                        const std::string& description) {
  auto options = std::make_shared<ExperimentOptions>();
  auto trace = std::make_shared<TraceOptions>();
  auto folders = std::make_shared<OutputFolders>();
  CLI::App* command = app.add_subcommand(name, description);
  add_experiment_options(*command, *options);
  add_trace_options(*command, *trace);
  add_folder_option(*command, "--csv", folders->csv,
                    "Write the per-token, per-layer and per-step tables as CSV to DIR");
  if (backend_name == "sim")
    add_folder_option(*command, "--heatmaps", folders->heatmaps,
                      "Write per-tile and per-link arrays of every wafer as .npy files to DIR");
  command->add_flag("--explain", folders->explain,
                    "Say why: the binding resources, the knobs that move the figure most and preset values that "
                    "change nothing, each by a closed-form re-run (table section \"why\", JSON \"explain\")");
  command->callback(
      [options, trace, folders, backend_name] { evaluate_decode(*options, *trace, *folders, backend_name); });
}

}  // namespace

void warn_if_prefill_overflows(uint64_t chunk_tokens, uint64_t sram_peak_bytes, uint64_t sram_bytes) {
  if (sram_peak_bytes <= sram_bytes) return;
  std::cerr << fmt::format(
      "warning: the prefill's {}-token chunks need {} bytes on the fullest tile, of {} (mapping.prefill_chunk: "
      "largest_fitting or fastest_fitting takes a chunk that fits; `wafersim map` names the largest)\n",
      chunk_tokens, sram_peak_bytes, sram_bytes);
}

void refuse_too_long(const Experiment& experiment, const std::string& why) {
  experiment.config.fail_given(
      {"workload.decode_tokens", "workload.batch", "hardware.offwafer.latency_cycles", "hardware.wafers"},
      why +
          "; fewer tokens (workload.decode_tokens, workload.batch), a shorter hardware.offwafer.latency_cycles or "
          "fewer hardware.wafers shorten it");
}

void add_run_command(CLI::App& app) {
  add_decode_command(
      app, "run", "sim",
      "Simulate the prompt's prefill and the decode on every tile of the wafer(s): time to first token, tokens/s "
      "and per-token latency");
}

void add_analytic_command(CLI::App& app) {
  add_decode_command(
      app, "analytic", "analytic",
      "Closed-form (contention-free) time to first token, tokens/s and per-token latency of the plan `run` "
      "simulates");
}

}  // namespace wafersim::cli
