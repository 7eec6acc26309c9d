// The closed form: each step's latency() chained through the plan's regions
// (mapping/timeline.h), contention-free by construction.
#include <algorithm>
#include <chrono>

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

// The timeline's iterations as the run's progress, at most once every
// `seconds` (none before the first `seconds`: most closed forms end sooner).
mapping::TimelineProgress throttled(const ProgressFn& progress, const mapping::Plan& plan, double seconds) {
  if (!progress) return {};
  const auto begin = std::chrono::steady_clock::now();
  return [&progress, &plan, seconds, begin, last = begin](uint64_t done) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last).count() < seconds) return;
    last = now;
    Progress line;
    line.tokens_done = done;
    line.tokens_total = plan.programs.iterations;
    line.wall_seconds = std::chrono::duration<double>(now - begin).count();
    line.unit = plan.phase == mapping::Phase::Prefill ? "prefill chunks" : "tokens";
    line.closed_form = true;
    progress(line);
  };
}

class AnalyticBackend : public Backend {
 public:
  const char* name() const override { return kName; }
  bool is_closed_form() const override { return true; }
  Evaluation evaluate(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions& options,
                      const ProgressFn& progress) const override {
    Evaluation evaluation;
    evaluation.timeline = mapping::analytic_timeline(plan, inputs, mapping::TimelineWalk::Shortcuts,
                                                     throttled(progress, plan, options.progress_seconds));
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
