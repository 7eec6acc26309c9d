#include "sim/reports/decode_run.h"

#include <algorithm>
#include <chrono>

#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

namespace wafersim::reports {

namespace {

// The prefill of `plan`, when the workload asks for one; the engine runs it in a child process.
std::optional<std::pair<mapping::Plan, backend::Evaluation>> evaluate_prefill(const Experiment& experiment,
                                                                              const mapping::Plan& plan,
                                                                              const backend::Backend& backend,
                                                                              const backend::ProgressFn& progress) {
  if (!experiment.workload.prefill) return std::nullopt;
  mapping::Plan prefill_plan = mapping::compile_prefill_plan(plan);
  backend::ProgressFn chunks;
  if (progress)
    chunks = [&progress](backend::Progress p) {
      p.unit = "prefill chunks";
      progress(p);
    };
  const auto begin = std::chrono::steady_clock::now();
  const workloads::PrefillInputs inputs(experiment.workload);
  backend::Evaluation evaluation = backend.evaluate_in_child(prefill_plan, inputs, experiment.sim, chunks);
  // The child's progress lines were its own: show where the prefill ended from here.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (chunks && evaluation.figures.measured && seconds >= experiment.sim.progress_seconds) {
    const uint64_t total = prefill_plan.programs.iterations;
    uint64_t end_cycle = 0;
    for (const std::vector<uint64_t>& region : evaluation.timeline.finish)
      if (!region.empty()) end_cycle = std::max(end_cycle, region.back());
    chunks({total, total, prefill_plan.hw.cycles_to_us(double(end_cycle)), double(evaluation.figures.events) / seconds,
            seconds});
  }
  return std::make_pair(std::move(prefill_plan), std::move(evaluation));
}

}  // namespace

DecodeRun run_decode(const Experiment& experiment, const mapping::Plan& plan, const backend::Backend& backend,
                     const SimOptions& options, const backend::ProgressFn& progress) {
  DecodeRun out;
  out.prefill = evaluate_prefill(experiment, plan, backend, progress);
  if (experiment.speculative) {
    out.speculative = evaluate_speculative(experiment, plan, backend, options, progress);
    out.evaluation = out.speculative->verify_run;
    out.metrics = out.speculative->metrics;
  } else {
    const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
    out.evaluation = backend.evaluate(plan, inputs, options, progress);
    out.metrics = decode_metrics(plan, out.evaluation.timeline);
  }
  if (out.prefill) {
    const auto& [prefill_plan, prefill_evaluation] = *out.prefill;
    backend::RunFigures& figures = out.evaluation.figures;
    out.metrics.prefill = prefill_metrics(prefill_plan, prefill_evaluation.timeline, out.metrics,
                                          out.speculative ? out.speculative->first_step : out.evaluation.timeline);
    figures.peak_rss_bytes = std::max(figures.peak_rss_bytes, prefill_evaluation.figures.peak_rss_bytes);
    if (figures.measured) {  // engine figures cover both simulations
      figures.events += prefill_evaluation.figures.events;
      figures.link_hops += prefill_evaluation.figures.link_hops;
    }
  }
  return out;
}

}  // namespace wafersim::reports
