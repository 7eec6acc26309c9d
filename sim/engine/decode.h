#pragma once
// A planned decode run on the engine: the plan's programs on every tile, and
// the timeline read back from its Mark tasks.
#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/engine/engine.h"

namespace wafersim::sim {

struct DecodeRun {
  EngineResult engine;
  mapping::DecodeTimeline timeline;
};

DecodeRun simulate_decode(const mapping::Plan& plan, const IterationInputs& inputs, const EngineOptions& options);

}  // namespace wafersim::sim
