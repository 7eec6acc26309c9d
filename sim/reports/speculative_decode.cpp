#include "sim/reports/speculative_decode.h"

#include <memory>

#include "mapping/verify_plan.h"
#include "models/program_events.h"
#include "sim/experiment/energy_metrics.h"
#include "sim/experiment/speculative_metrics.h"
#include "sim/experiment/speculative_placement.h"
#include "sim/reports/decode_run.h"
#include "workloads/decode_inputs.h"
#include "workloads/verify_inputs.h"

namespace wafersim::reports {

SpeculativeEvaluation evaluate_speculative(const Experiment& experiment, const mapping::Plan& target,
                                           const backend::Backend& backend, const SimOptions& options,
                                           const backend::ProgressFn& progress) {
  const workloads::SpeculativeSpec& spec = *experiment.speculative;
  const uint32_t wafer_rows = experiment.hardware.grid_height;
  const SpeculativeRows rows{target.hw.grid_height, wafer_rows - target.hw.grid_height};
  SpeculativeEvaluation out;
  out.draft = compile_draft_plan(experiment, rows);
  out.draft.workload.decode_tokens = spec.draft_tokens;
  out.draft.programs.iterations = uint64_t(out.draft.workload.batch) * spec.draft_tokens;
  const uint32_t positions = spec.draft_tokens + 1;
  const bool pipelined = spec.verify == workloads::VerifyKind::Pipelined;
  out.verify = pipelined ? mapping::compile_pipelined_verify_plan(target, positions)
                         : mapping::compile_verify_plan(target, positions);

  backend::ProgressFn draft_progress;
  if (progress)
    draft_progress = [&progress](backend::Progress p) {
      p.unit = "draft tokens";
      progress(p);
    };
  const workloads::DecodeInputs draft_inputs(out.draft.model, out.draft.workload);
  SimOptions draft_options = options;
  draft_options.tile_figures = false;
  const backend::Evaluation draft_run =
      backend.evaluate_in_child(out.draft, draft_inputs, draft_options, draft_progress);

  std::unique_ptr<IterationInputs> verify_inputs;
  if (pipelined) {
    // Iteration j * batch + s is position j of sequence s: a decode token's inputs.
    workloads::WorkloadSpec positions_workload = target.workload;
    positions_workload.decode_tokens = positions;
    verify_inputs = std::make_unique<workloads::DecodeInputs>(target.model, positions_workload);
  } else {
    verify_inputs = std::make_unique<workloads::VerifyInputs>(target.model, target.workload,
                                                              positions);  // each sequence's own prompt
  }
  out.verify_run = backend.evaluate(out.verify, *verify_inputs, options, progress);
  out.metrics = speculative_decode_metrics(spec, target, out.draft, draft_run.timeline, out.verify,
                                           out.verify_run.timeline, wafer_rows);
  // Every step repeats the draft's events of all its iterations, then the verify pass's.
  const SpeculativeMetrics& s = *out.metrics.speculative;
  const EventCounts draft_events = ProgramEvents(out.draft.programs, out.draft.hw.fabric.detours.get())
                                       .range(0, out.draft.programs.iterations, draft_inputs);
  const EventCounts verify_events = ProgramEvents(out.verify.programs, out.verify.hw.fabric.detours.get())
                                        .range(0, out.verify.programs.iterations, *verify_inputs);
  out.metrics.energy =
      stepped_energy_metrics(whole_system(experiment, target),
                             {{draft_events, s.draft_cycles_per_step}, {verify_events, s.verify_cycles_per_step}},
                             s.steps, out.metrics.tokens);
  out.first_step = first_step_timeline(*out.metrics.speculative, out.verify_run.timeline, target.workload.batch);
  backend::RunFigures& figures = out.verify_run.figures;
  figures.peak_rss_bytes = std::max(figures.peak_rss_bytes, draft_run.figures.peak_rss_bytes);
  if (figures.measured) {
    figures.events += draft_run.figures.events;
    figures.link_hops += draft_run.figures.link_hops;
  }
  return out;
}

}  // namespace wafersim::reports
