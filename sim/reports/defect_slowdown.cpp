#include "sim/reports/defect_slowdown.h"

#include <algorithm>

#include "sim/reports/speculative_decode.h"

namespace wafersim::reports {

namespace {

// DecodeMetrics::total_cycles of the plan's closed form: until the last token left the LM head.
uint64_t closed_form_cycles(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions& options) {
  const backend::Evaluation evaluation = backend::make_backend("analytic")->evaluate(plan, inputs, options, {});
  const std::vector<uint64_t>& head = evaluation.timeline.finish.back();
  return head.empty() ? 0 : *std::max_element(head.begin(), head.end());
}

Experiment on_perfect_wafer(const Experiment& experiment) {
  Experiment perfect = experiment;
  perfect.hardware.repairs = nullptr;
  perfect.hardware.fabric.detours = nullptr;
  return perfect;
}

}  // namespace

DefectSlowdown defect_slowdown(const Experiment& experiment, const mapping::Plan& plan, const backend::Backend& backend,
                               const DecodeMetrics& decode, const IterationInputs& inputs) {
  const Experiment perfect = on_perfect_wafer(experiment);
  DefectSlowdown out;
  out.closed_form_cycles =
      backend.is_closed_form() ? decode.total_cycles : closed_form_cycles(plan, inputs, experiment.sim);
  out.perfect_wafer_cycles = closed_form_cycles(compile_plan(perfect), inputs, experiment.sim);
  return out;
}

DefectSlowdown speculative_defect_slowdown(const Experiment& experiment, const mapping::Plan& target,
                                           const backend::Backend& backend, const DecodeMetrics& decode) {
  const auto analytic = backend::make_backend("analytic");
  auto total_cycles = [&](const Experiment& e, const mapping::Plan& plan) {
    return evaluate_speculative(e, plan, *analytic, e.sim, {}).metrics.total_cycles;
  };
  const Experiment perfect = on_perfect_wafer(experiment);
  DefectSlowdown out;
  out.closed_form_cycles = backend.is_closed_form() ? decode.total_cycles : total_cycles(experiment, target);
  out.perfect_wafer_cycles = total_cycles(perfect, compile_plan(perfect));
  return out;
}

}  // namespace wafersim::reports
