#pragma once
// The verify pass of speculative decoding over `positions` tokens (the k drafts
// and one more) of every sequence, in one of two ways:
// - pipelined: the positions enter the target's layer pipeline one after
//   another, as decode tokens that are all present at once (a region takes
//   position i + 1 as soon as it has passed position i on);
// - chunk: each iteration carries all the positions through every region, the
//   LM head included, as a prefill chunk carries its tokens (StepEnv::tokens):
//   a step works on all of them before the next step starts.
#include <cstdint>

#include "mapping/plan.h"

namespace wafersim::mapping {

// Same regions on the same tiles as `decode` (weights and KV cache stay where
// decode reads them). The LM head computes the logits of every position. In an
// MoE layer each routed expert takes an even share of the positions' choices,
// as a prefill chunk's experts do by default.
// One iteration per sequence.
Plan compile_verify_plan(const Plan& decode, uint32_t positions);

// The decode plan's own regions and programs, for batch x positions
// iterations all present at cycle 0: iteration j * batch + s is position j of
// sequence s (what DecodeInputs with decode_tokens = positions describes).
Plan compile_pipelined_verify_plan(const Plan& decode, uint32_t positions);

}  // namespace wafersim::mapping
