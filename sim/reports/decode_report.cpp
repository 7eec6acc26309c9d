#include "sim/reports/decode_report.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/experiment/process_memory.h"
#include "sim/reports/decode_run.h"
#include "sim/reports/functional_check.h"
#include "sim/reports/metric_table.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"

namespace wafersim::reports {

nlohmann::json decode_json(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                           const backend::RunFigures& figures) {
  nlohmann::json document = nlohmann::json::object();
  write_metrics({experiment, plan, metrics, figures}, document);
  return document;
}

std::string decode_table(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                         const backend::RunFigures& figures) {
  std::string out =
      fmt::format("{} on {} ({} wafer(s)), batch {}, {}, {} decoded tokens per sequence [{}]\n",
                  section_label(experiment.config, "model", plan.model.name),
                  section_label(experiment.config, "hardware", plan.hw.name), plan.hw.wafers, plan.workload.batch,
                  plan.workload.prompt_lengths.empty()
                      ? fmt::format("prompt {} tokens", plan.workload.prompt_tokens)
                      : fmt::format("prompts of {} tokens", fmt::join(plan.workload.prompt_lengths, ", ")),
                  plan.workload.decode_tokens, figures.backend);
  Table table({{"metric", "", false}, {"value", "", true}, {"unit", "", false}});
  for (std::vector<std::string>& row : metric_rows({experiment, plan, metrics, figures})) table.add_row(std::move(row));
  out += table.str();
  if (!figures.first_token_steps.empty()) {
    Table steps({{"region", "", false}, {"step", "", false}, {"cycles", "", true}});
    for (const backend::StepCycles& step : figures.first_token_steps)
      steps.add_row({step.region, step.step, std::to_string(step.cycles)});
    out += "\nsteps of the first token:\n" + steps.str();
  }
  return out;
}

Report decode_report(const Experiment& experiment, const mapping::Plan& plan, const std::string& backend_name,
                     const backend::ProgressFn& progress, std::chrono::steady_clock::time_point begin,
                     const TraceWindow* trace, bool tile_figures) {
  refuse_impossible_functional_check(experiment);  // the commands refuse it before compiling; a library call too
  const std::unique_ptr<backend::Backend> backend = backend::make_backend(backend_name);
  SimOptions decode_options = experiment.sim;
  decode_options.tile_figures = tile_figures;
  const reports::DecodeRun run = reports::run_decode(experiment, plan, *backend, decode_options, progress);
  const auto& [evaluation, metrics, prefill, speculative] = run;
  backend::RunFigures figures = evaluation.figures;
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  figures.peak_rss_bytes = std::max(figures.peak_rss_bytes, peak_rss_bytes());
  nlohmann::json trace_document = nullptr;
  if (trace) {
    TracedPhase prefill_phase;
    if (prefill) prefill_phase = {&prefill->first, &prefill->second.timeline};
    const mapping::Plan& decode_plan = speculative ? speculative->verify : plan;
    trace_document = timeline_trace(prefill_phase, {&decode_plan, &evaluation.timeline}, *trace, backend->name(),
                                    figures.first_token_steps);
  }
  Report report{decode_json(experiment, plan, metrics, figures), decode_table(experiment, plan, metrics, figures),
                std::move(trace_document), figures.tiles};
  add_functional_check(experiment, plan, prefill ? &prefill->first : nullptr, report);
  return report;
}

}  // namespace wafersim::reports
