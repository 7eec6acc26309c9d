#pragma once
// A built region measured against its tiles' SRAM: the fullest tile, the mean,
// the largest context every tile still holds, and the report of what does not
// fit. The compiler measures decode's regions with it and the prefill plan its
// chunk's, so both phases read one account (tile_sram.h).
#include <cstdint>
#include <string>

#include "mapping/plan.h"
#include "mapping/region.h"
#include "mapping/tile_sram.h"
#include "models/hardware.h"

namespace wafersim::mapping {

// The fullest tile of a region.
struct FullestTile {
  uint32_t wafer = 0, x = 0, y = 0;
  TileSram sram;  // its activation bytes do not shrink when the region grows
};

// A region's fullest tile, taken to the same place in a box of the same shape.
FullestTile moved(FullestTile tile, const BlockGeometry& from, const BlockGeometry& to);

// What placing the fullest tile's items in order says when they do not fit ("fits" when they do).
std::string overflow_report(const FullestTile& tile, const HardwareSpec& hw);

// Weight bytes of a region, each step's weights and biases in their formats.
uint64_t region_weight_bytes_placed(const Region& region);

// The region's figures with the KV cache at `max_context` tokens and a block
// root keeping `stream_buffer` bytes more; `fullest` gets its fullest tile.
RegionStats measure_region(const Region& region, const HardwareSpec& hw, uint64_t max_context, uint64_t stream_buffer,
                           uint32_t colors_available, FullestTile* fullest);

}  // namespace wafersim::mapping
