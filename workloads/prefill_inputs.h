#pragma once
// Per-iteration inputs of a prefill: iteration n is the chunk
// workload.prefill_order()[n] names, of workload.prefill_chunk_size() tokens at
// positions chunk * size onwards of its sequence's prompt. Its tokens attend to their own position and those
// before it; a chunk is costed at its tokens' mean context (attention work is
// linear in the context, so the chunk's total is exact to half a position per token).
#include <cstdint>
#include <utility>
#include <vector>

#include "models/tile_program.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

class PrefillInputs : public IterationInputs {
 public:
  explicit PrefillInputs(const WorkloadSpec& workload)
      : chunk_size_(workload.prefill_chunk_size()), order_(workload.prefill_order()) {}
  uint64_t context(uint64_t iteration) const override;
  // A chunk's tokens reach every expert (the prefill plan gives each an even share).
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }

 private:
  uint64_t chunk_size_;
  std::vector<std::pair<uint32_t, uint64_t>> order_;
};

}  // namespace wafersim::workloads
