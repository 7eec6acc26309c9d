#pragma once
// Per-iteration inputs of a prefill: iteration n is chunk n / batch of sequence
// n % batch's prompt, of workload.prefill_chunk_size() tokens at positions
// chunk * size onwards. Its tokens attend to their own position and those
// before it; a chunk is costed at its tokens' mean context (attention work is
// linear in the context, so the chunk's total is exact to half a position per token).
#include <cstdint>

#include "models/tile_program.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

class PrefillInputs : public IterationInputs {
 public:
  explicit PrefillInputs(const WorkloadSpec& workload) : workload_(workload) {}
  uint64_t context(uint64_t iteration) const override;
  // A chunk's tokens reach every expert (the prefill plan gives each an even share).
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }

 private:
  WorkloadSpec workload_;
};

}  // namespace wafersim::workloads
