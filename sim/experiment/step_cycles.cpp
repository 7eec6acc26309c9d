#include "sim/experiment/step_cycles.h"

namespace wafersim {

std::vector<StepCycles> region_steps(const mapping::Plan& plan, const IterationInputs& inputs) {
  std::vector<StepCycles> steps;
  for (const mapping::Region& region : plan.regions)
    for (const auto& [label, cycles] : region.step_cycles(inputs, 0)) steps.push_back({region.name, label, cycles});
  return steps;
}

}  // namespace wafersim
