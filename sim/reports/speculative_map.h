#pragma once
// What `wafersim map` adds with speculative decoding: where the draft lives
// beside the target, and what its plan holds (SRAM counted like the target's).
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"

namespace wafersim::reports {

struct SpeculativeMap {
  nlohmann::json document;  // the map JSON's "speculative" object
  std::string table;        // printed after the target's regions
};

// `target` is compile_plan(experiment); experiment.speculative must be set.
SpeculativeMap speculative_map(const Experiment& experiment, const mapping::Plan& target);

}  // namespace wafersim::reports
