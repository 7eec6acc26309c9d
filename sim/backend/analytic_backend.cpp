// The closed form: each step's latency() chained through the plan's regions
// (mapping/timeline.h), contention-free by construction.
#include <algorithm>

#include "sim/backend/backend.h"

namespace wafersim::backend {

namespace {

constexpr char kName[] = "analytic";

// Where a region's time goes, step by step, for the first token: one region of each kind.
std::vector<StepCycles> first_token_steps(const mapping::Plan& plan, const IterationInputs& inputs) {
  std::vector<StepCycles> steps;
  std::vector<mapping::RegionKind> shown;
  for (const mapping::Region& region : plan.regions) {
    if (std::find(shown.begin(), shown.end(), region.kind) != shown.end()) continue;
    shown.push_back(region.kind);
    for (const auto& [label, cycles] : region.step_cycles(inputs, 0)) steps.push_back({region.name, label, cycles});
  }
  return steps;
}

class AnalyticBackend : public Backend {
 public:
  const char* name() const override { return kName; }
  bool is_closed_form() const override { return true; }
  Evaluation evaluate(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions&,
                      const ProgressFn&) const override {
    Evaluation evaluation;
    evaluation.timeline = mapping::analytic_timeline(plan, inputs);
    evaluation.figures.backend = name();
    evaluation.figures.first_token_steps = first_token_steps(plan, inputs);
    evaluation.figures.region_steps = wafersim::region_steps(plan, inputs);  // --csv and metrics.steps_per_region
    return evaluation;
  }
};

const BackendRegistration registered(
    kName, "the contention-free closed form of the plan's steps, chained over its regions (analytic)",
    [] { return std::unique_ptr<Backend>(std::make_unique<AnalyticBackend>()); });

}  // namespace

}  // namespace wafersim::backend
