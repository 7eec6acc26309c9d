#pragma once
// Where speculative decoding puts its two models: the target on the first rows
// of every wafer, the draft on the remaining rows of the first wafer. The split
// follows the bytes (weights and KV cache) each needs, and grows the draft's
// band until the draft fits.
#include <cstdint>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"

namespace wafersim {

struct SpeculativeRows {
  uint32_t target = 0;  // rows 0 .. target - 1 of every wafer
  uint32_t draft = 0;   // rows target .. grid_height - 1 of wafer 0
};

// The split of the experiment's wafer rows (experiment.speculative must be set).
// Throws mapping::DoesNotFitError when the draft fits no band that leaves the target a row.
SpeculativeRows speculative_rows(const Experiment& experiment);

// The target's decode plan on its band (what compile_plan(experiment) returns
// with speculation), and the draft's on the band the target leaves, compiled
// for the same workload plus the verify pass's k positions.
// Throws mapping::DoesNotFitError naming the model that does not fit.
mapping::Plan compile_target_plan(const Experiment& experiment, const SpeculativeRows& rows);
mapping::Plan compile_draft_plan(const Experiment& experiment, const SpeculativeRows& rows);

}  // namespace wafersim
