// wafersim run | analytic: one path from an experiment to its decode results,
// through the backend the command names.
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "sim/backend/backend.h"
#include "sim/cli/commands.h"
#include "sim/cli/compile.h"
#include "sim/cli/decode_report.h"
#include "sim/cli/output.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"
#include "sim/experiment/process_memory.h"
#include "workloads/decode_inputs.h"

namespace wafersim::cli {

namespace {

// A decode longer than the backend can count is bad input: blame what the user
// wrote among the values that make it long.
[[noreturn]] void refuse_too_long(const Experiment& experiment, const std::string& why) {
  experiment.config.fail_given(
      {"workload.decode_tokens", "workload.batch", "hardware.offwafer.latency_cycles", "hardware.wafers"},
      why +
          "; fewer tokens (workload.decode_tokens, workload.batch), a shorter hardware.offwafer.latency_cycles or "
          "fewer hardware.wafers shorten it");
}

void evaluate_decode(const ExperimentOptions& options, const std::string& backend_name) {
  const auto begin = std::chrono::steady_clock::now();
  const Experiment experiment = load_experiment(options.file, options.common.sets);
  const mapping::Plan plan = compile_or_record_refusal(experiment, options.common);
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);

  bool progress_shown = false;
  backend::ProgressFn progress;
  if (!options.common.quiet)
    progress = [&](const backend::Progress& p) {
      std::cerr << fmt::format("\r{:.1f} s: {}/{} tokens, {:.3f} ms simulated, {:.1f} M events/s   ", p.wall_seconds,
                               p.tokens_done, p.tokens_total, p.simulated_us / 1e3, p.events_per_second / 1e6)
                << std::flush;
      progress_shown = true;
    };
  backend::Evaluation evaluation;
  try {
    evaluation = backend::make_backend(backend_name)->evaluate(plan, inputs, experiment.sim, progress);
  } catch (const CycleLimitError& error) {
    if (progress_shown) std::cerr << "\n";
    refuse_too_long(experiment, error.what());
  }
  if (progress_shown) std::cerr << "\n";

  const DecodeMetrics metrics = decode_metrics(plan, evaluation.timeline);
  backend::RunFigures& figures = evaluation.figures;
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  figures.peak_rss_bytes = peak_rss_bytes();
  if (!options.common.quiet) options.common.table_out() << decode_table(experiment, plan, metrics, figures);
  if (!options.common.json_path.empty())
    write_json(options.common.json_path, decode_json(experiment, plan, metrics, figures));
}

void add_decode_command(CLI::App& app, const std::string& name, const std::string& backend_name,
                        const std::string& description) {
  auto options = std::make_shared<ExperimentOptions>();
  CLI::App* command = app.add_subcommand(name, description);
  add_experiment_options(*command, *options);
  command->callback([options, backend_name] { evaluate_decode(*options, backend_name); });
}

}  // namespace

void add_run_command(CLI::App& app) {
  add_decode_command(app, "run", "sim",
                     "Simulate the decode on every tile of the wafer(s): tokens/s and per-token latency");
}

void add_analytic_command(CLI::App& app) {
  add_decode_command(app, "analytic", "analytic",
                     "Closed-form (contention-free) tokens/s and per-token latency of the plan `run` simulates");
}

}  // namespace wafersim::cli
