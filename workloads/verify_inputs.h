#pragma once
// Per-iteration inputs of a verify pass (speculative decoding): iteration n is
// sequence n % batch's pass over `positions` tokens, the first at its
// sequence's next decode position. Like a prefill chunk, the pass is costed at
// its tokens' mean context (exact to half a position per token), and its
// tokens reach every expert of an MoE layer (the verify plan gives each an even share).
#include <cstdint>

#include "workloads/decode_inputs.h"

namespace wafersim::workloads {

class VerifyInputs : public IterationInputs {
 public:
  VerifyInputs(const ModelSpec& model, const WorkloadSpec& workload, uint32_t positions)
      : first_(model, workload), positions_(positions) {}
  // Token t of the pass attends to context + t positions: the mean over t < positions.
  uint64_t context(uint64_t iteration) const override { return first_.context(iteration) + (positions_ - 1) / 2; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }

 private:
  DecodeInputs first_;  // the pass's first token: a decode token's position
  uint32_t positions_;
};

}  // namespace wafersim::workloads
