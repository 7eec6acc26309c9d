#pragma once
// What one tile of a region holds in SRAM: its share of the block's weights and
// KV cache and its activation buffers. The compiler checks every tile against
// this, and the SRAM heatmaps draw it, so both read one account.
#include <cstdint>
#include <vector>

#include "mapping/plan.h"
#include "mapping/region.h"

namespace wafersim::mapping {

struct TileSram {
  uint64_t weight_elements = 0;
  uint64_t weights = 0;      // bytes, weights and biases in their formats
  uint64_t kv = 0;           // bytes of KV cache at the workload's largest context
  uint64_t activations = 0;  // bytes of activation buffers (the largest step's and the kept residual stream), stream
                             // buffer of a root included
};

// Tile (i, j) of `block`, with the KV cache at `max_context` tokens and a block
// root keeping `stream_buffer` bytes more.
TileSram tile_sram(const Block& block, uint32_t i, uint32_t j, uint64_t max_context, uint64_t stream_buffer);

// Every tile of every wafer of `plan`, tile id order ((wafer * height + y) * width + x).
// Tiles outside every region hold nothing (region -1); the runtime reserve is not included.
struct SramGrid {
  std::vector<uint64_t> weights, kv, activations;
  std::vector<int32_t> region;  // index into plan.regions, -1 for a tile no region uses
};
SramGrid sram_grid(const Plan& plan);

}  // namespace wafersim::mapping
