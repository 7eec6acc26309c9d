#pragma once
// Cycles of one step of a region's chain, from its input being complete to its
// output being complete: the closed form's account of where an iteration's
// (a token's or a prefill chunk's) time goes.
#include <cstdint>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "models/tile_program.h"

namespace wafersim {

struct StepCycles {
  std::string region;
  std::string step;
  uint64_t cycles = 0;
};

// Every region's steps of the plan's first iteration, region by region.
std::vector<StepCycles> region_steps(const mapping::Plan& plan, const IterationInputs& inputs);

}  // namespace wafersim
