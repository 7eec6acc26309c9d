// wafersim run | analytic: one path from an experiment to its decode results,
// through the backend the command names.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

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
#include "workloads/prefill_inputs.h"

namespace wafersim::cli {

namespace {

void evaluate_decode(const ExperimentOptions& options, const std::string& backend_name) {
  const auto begin = std::chrono::steady_clock::now();
  const Experiment experiment = load_experiment(options.file, options.common.sets);
  const mapping::Plan plan = compile_or_record_refusal(experiment, options.common);
  const workloads::DecodeInputs inputs(experiment.model, experiment.workload);

  bool progress_shown = false;
  const char* phase = "decode: tokens";
  backend::ProgressFn progress;
  if (!options.common.quiet)
    progress = [&](const backend::Progress& p) {
      std::cerr << fmt::format("\r{:.1f} s: {} {}/{}, {:.3f} ms simulated, {:.1f} M events/s   ", p.wall_seconds, phase,
                               p.tokens_done, p.tokens_total, p.simulated_us / 1e3, p.events_per_second / 1e6)
                << std::flush;
      progress_shown = true;
    };
  const std::unique_ptr<backend::Backend> backend = backend::make_backend(backend_name);
  std::optional<mapping::Plan> prefill_plan;
  std::optional<backend::Evaluation> prefill;
  if (experiment.workload.prefill) {
    try {
      prefill_plan = mapping::compile_prefill_plan(plan);
    } catch (const std::invalid_argument& unsupported) {
      if (!options.common.quiet)
        std::cerr << "note: prefill not timed (" << unsupported.what() << "); set workload.prefill: false\n";
    }
    if (prefill_plan) {
      const workloads::PrefillInputs prefill_inputs(experiment.workload);
      phase = "prefill: chunks";
      const auto prefill_begin = std::chrono::steady_clock::now();
      prefill = backend->evaluate_in_child(*prefill_plan, prefill_inputs, experiment.sim, progress);
      // The engine reported from a child process: end its progress line if it drew one.
      const double prefill_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - prefill_begin).count();
      if (progress && prefill->figures.measured && prefill_seconds >= experiment.sim.progress_seconds)
        std::cerr << "\n";
      phase = "decode: tokens";
    }
  }
  backend::Evaluation evaluation = backend->evaluate(plan, inputs, experiment.sim, progress);
  if (progress_shown) std::cerr << "\n";

  DecodeMetrics metrics = decode_metrics(plan, evaluation.timeline);
  if (prefill) metrics.prefill = prefill_metrics(*prefill_plan, prefill->timeline, metrics, evaluation.timeline);
  backend::RunFigures& figures = evaluation.figures;
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  figures.peak_rss_bytes = std::max(peak_rss_bytes(), prefill ? prefill->figures.peak_rss_bytes : 0);
  if (prefill && figures.measured) {
    // Engine figures cover both simulations: events and hops add up.
    figures.events += prefill->figures.events;
    figures.link_hops += prefill->figures.link_hops;
  }
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
