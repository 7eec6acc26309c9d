#pragma once
// Cycles of one step of a region's chain, from its input being complete to its
// output being complete: the closed form's account of where an iteration's
// (a token's or a prefill chunk's) time goes.
#include <cstdint>
#include <string>

namespace wafersim {

struct StepCycles {
  std::string region;
  std::string step;
  uint64_t cycles = 0;
};

}  // namespace wafersim
