#pragma once
// The functional check of a plan (sim.functional): the plan evaluated
// on real numbers (evaluator.h) against the Eigen forward pass (reference.h),
// token by token, step by step.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "sim/functional/evaluator.h"

namespace wafersim::functional {

// The first step whose output is further from the reference than the tolerance.
struct Divergence {
  uint32_t sequence = 0;
  uint64_t position = 0;
  std::string region, step, value;
  int32_t layer = -1;
  uint32_t wafer = 0, x = 0, y = 0;  // the tile with the largest error in that output
  double rel_error = 0;
  std::string what;  // a plan inconsistency found while evaluating, when that is the cause
  std::string plan;  // "prefill" or "decode": the plan that step belongs to
};

struct FunctionalReport {
  uint64_t tokens = 0;            // evaluated: every prompt and decoded position of every sequence
  bool prefill_checked = false;   // the prompt went through the prefill plan (else through the decode plan)
  double max_abs_error = 0;       // over the final hidden states and logits of every token
  double max_rel_error = 0;       // the same, each divided by the largest |reference| of its vector
  double argmax_agreement = 0;    // fraction of tokens whose argmax matches the reference's
  double tolerance = 0;           // on max_rel_error, and on every step's relative error
  uint64_t router_near_ties = 0;  // MoE choices rounding flipped within the tolerance, followed by the reference
  std::optional<Divergence> first;
  bool passed = false;
  double wall_seconds = 0;
  uint64_t tiles = 0;         // tiles that hold weights
  uint64_t weight_bytes = 0;  // numbers held on tiles (4 bytes each)
  uint64_t kv_bytes = 0;
};

// The tolerance for a plan's formats (docs/VALIDATION.md, "Numbers"): the
// model's, and the partial sums' along the plan's longest reduction line.
double functional_tolerance(const mapping::Plan& plan);

// `plan` is the decode plan. With workload.prefill the prompt goes through
// its prefill plan chunk by chunk (`prefill`, or compiled from `plan` when
// not given), then decode reads the KV cache the chunks wrote; without it
// every position goes through the decode plan. Throws FunctionalError when a
// plan cannot be evaluated (unsupported_reason).
FunctionalReport check_functional(const mapping::Plan& plan, std::vector<DroppedPartialSum> faults = {},
                                  const mapping::Plan* prefill = nullptr);

// One line for the command's table.
std::string functional_summary(const FunctionalReport& report);

}  // namespace wafersim::functional
