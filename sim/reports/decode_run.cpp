#include "sim/reports/decode_run.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

#include "mapping/programs.h"
#include "sim/reports/defect_slowdown.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

namespace wafersim::reports {

namespace {

// A prefill started beside the decode: its plan and its evaluation, pending.
struct StartedPrefill {
  mapping::Plan plan;
  std::unique_ptr<backend::PendingEvaluation> evaluation;
  std::chrono::steady_clock::time_point begin;
};

// The prefill of `plan`, when the workload asks for one. The engine simulates
// it in a child process while this one simulates the decode: the two programs
// are independent (the decode does not start from the prefill's simulated state).
std::optional<StartedPrefill> start_prefill(const Experiment& experiment, const mapping::Plan& plan,
                                            const backend::Backend& backend) {
  if (!experiment.workload.prefill) return std::nullopt;
  StartedPrefill started{mapping::compile_prefill_plan(plan), nullptr, std::chrono::steady_clock::now()};
  // Its programs are built: their sources would stay beside both simulations (the child's and this process's).
  mapping::release_program_sources(started.plan);
  const workloads::PrefillInputs inputs(started.plan.workload);  // its chunks, as the plan fitted them
  started.evaluation = backend.start_in_child(started.plan, inputs, experiment.sim);
  return started;
}

std::pair<mapping::Plan, backend::Evaluation> finish_prefill(const Experiment& experiment, StartedPrefill started,
                                                             const backend::ProgressFn& progress) {
  backend::Evaluation evaluation = started.evaluation->collect();
  // The child shows no progress of its own: say here where the prefill ended.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started.begin).count();
  if (progress && evaluation.figures.measured && seconds >= experiment.sim.progress_seconds) {
    const uint64_t total = started.plan.programs.iterations;
    uint64_t end_cycle = 0;
    for (const std::vector<uint64_t>& region : evaluation.timeline.finish)
      if (!region.empty()) end_cycle = std::max(end_cycle, region.back());
    backend::Progress done{total, total, started.plan.hw.cycles_to_us(double(end_cycle)),
                           double(evaluation.figures.events) / seconds, seconds};
    done.unit = "prefill chunks";
    progress(done);
  }
  return std::make_pair(std::move(started.plan), std::move(evaluation));
}

}  // namespace

HardwareSpec whole_system(const Experiment& experiment, const mapping::Plan& plan) {
  HardwareSpec hw = plan.hw;
  hw.grid_height = experiment.hardware.grid_height;  // a speculating target's plan holds only its band of rows
  return hw;
}

DecodeRun run_decode(const Experiment& experiment, const mapping::Plan& plan, const backend::Backend& backend,
                     const SimOptions& options, const backend::ProgressFn& progress) {
  DecodeRun out;
  std::optional<StartedPrefill> prefill = start_prefill(experiment, plan, backend);
  if (experiment.speculative) {
    out.speculative = evaluate_speculative(experiment, plan, backend, options, progress);
    out.evaluation = out.speculative->verify_run;
    out.metrics = out.speculative->metrics;
    if (plan.hw.repairs) out.metrics.defects = speculative_defect_slowdown(experiment, plan, backend, out.metrics);
  } else {
    const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
    // The energy's events and the experts' load need no timeline: counted on
    // another core while the backend times the decode, with inputs of their
    // own (DecodeInputs keeps the last routing it drew).
    std::future<DecodeCounts> counts = std::async(std::launch::async, [&experiment, &plan] {
      const workloads::DecodeInputs own(experiment.model, experiment.workload);
      return count_decode(plan, own);
    });
    out.evaluation = backend.evaluate(plan, inputs, options, progress);
    out.metrics = decode_metrics(plan, out.evaluation.timeline, counts.get());
    if (plan.hw.repairs) out.metrics.defects = defect_slowdown(experiment, plan, backend, out.metrics, inputs);
  }
  if (prefill) out.prefill = finish_prefill(experiment, std::move(*prefill), progress);
  if (out.prefill) {
    const auto& [prefill_plan, prefill_evaluation] = *out.prefill;
    backend::RunFigures& figures = out.evaluation.figures;
    const workloads::PrefillInputs inputs(prefill_plan.workload);
    out.metrics.prefill =
        prefill_metrics(prefill_plan, prefill_evaluation.timeline, inputs, whole_system(experiment, plan), out.metrics,
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
