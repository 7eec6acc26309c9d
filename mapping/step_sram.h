#pragma once
// A step's SRAM face: what each tile of its block keeps for it. tile_sram.h
// sums these per tile, which the compiler checks every tile against; the
// timing face (emit, latency) is Step's (steps.h), which has this one.
#include <cstdint>

#include "models/dtype.h"

namespace wafersim::mapping {

class StepSram {
 public:
  virtual ~StepSram() = default;

  // Weight elements tile (i, j) stores for this step, in weight_dtype(), and
  // bias elements, in bias_dtype() (biases are never block-scaled).
  virtual uint64_t weight_elements(uint32_t, uint32_t) const { return 0; }
  virtual Dtype weight_dtype() const { return Dtype::BF16; }
  virtual uint64_t bias_elements(uint32_t, uint32_t) const { return 0; }
  virtual Dtype bias_dtype() const { return Dtype::BF16; }
  // The same summed over the block's tiles (weights and biases together).
  virtual uint64_t total_weight_elements() const { return 0; }
  virtual uint64_t total_weight_bytes() const { return 0; }
  virtual uint64_t total_kv_bytes(uint64_t /*context*/) const { return 0; }
  // Other SRAM the step needs on tile (i, j).
  virtual uint64_t kv_bytes(uint32_t, uint32_t, uint64_t /*context*/) const { return 0; }
  // Buffers the step uses while it runs, for the iteration's tokens
  // (StepEnv::tokens): a step starts once the whole chunk has reached it, so
  // its inputs and outputs are held for every token of the chunk, its working
  // buffers (a partial sum in flight) once, and data streaming through a tile
  // in a stream buffer.
  virtual uint64_t activation_bytes(uint32_t, uint32_t) const { return 0; }
  // Data the step leaves on tile (i, j) for later steps of the chain, held
  // beside their buffers: the residual stream's slices, for the iteration's tokens.
  virtual uint64_t kept_bytes(uint32_t, uint32_t) const { return 0; }
  // Largest context whose KV share still fits in `free_bytes` of tile (i, j).
  virtual uint64_t max_context(uint32_t, uint32_t, uint64_t /*free_bytes*/) const { return UINT64_MAX; }
  // Per-tile KV share (Task::kTileParam), when the step has one.
  virtual bool has_kv_offset() const { return false; }
  virtual uint32_t kv_offset(uint32_t, uint32_t) const { return 0; }
};

}  // namespace wafersim::mapping
