#pragma once
// Where regions go: how many wafers, how each wafer is cut into vertical strips,
// and the rectangle of every region. Regions follow token order in a serpentine
// (down the first strip, up the next, ...) so consecutive regions are neighbours.
#include <cstdint>
#include <map>
#include <vector>

#include "mapping/block.h"
#include "mapping/mapping_options.h"
#include "mapping/region.h"
#include "models/hardware.h"

namespace wafersim::mapping {

struct RegionNeed {
  RegionKind kind = RegionKind::Dense;
  int32_t layer = -1;
  uint64_t bytes = 0;  // weights + KV cache at the largest context
  // Tiles this region needs at least in strips of a given width, learnt from
  // builds that overflowed (activation buffers depend on the region's shape).
  std::map<uint32_t, uint64_t> min_tiles_at_width;
  uint32_t min_height = 1;  // rows of a strip this region needs at least, for the strip width at hand
};

struct Layout {
  uint32_t wafers = 0;
  uint32_t strips = 0;
  uint32_t strip_width = 0;          // the last strip also takes grid_width % strips columns
  std::vector<BlockGeometry> boxes;  // one per need, in order
};

// Tiles across each of `strips` strips (the last one also takes the columns
// the division leaves, except with a fixed layer grid).
uint32_t strip_width(const HardwareSpec& hw, const MappingOptions& options, uint32_t strips);

// Rows a region needs in a strip of `strip_width` tiles when each tile can hold
// `bytes_per_tile` of its bytes.
uint32_t min_height_for(uint64_t bytes, uint32_t strip_width, uint64_t bytes_per_tile);

// Fewest wafers that hold the needs in order (greedy, strips of the given width).
uint32_t wafers_needed(const std::vector<RegionNeed>& needs, const HardwareSpec& hw, uint32_t strips);

// Places the needs on `wafers` wafers; empty boxes when they do not fit.
Layout place_regions(const std::vector<RegionNeed>& needs, const HardwareSpec& hw, const MappingOptions& options,
                     uint32_t wafers, uint32_t strips);

// Strips per wafer for the preferred region aspect (columns / rows).
uint32_t choose_strips(const HardwareSpec& hw, const MappingOptions& options, size_t regions_per_wafer);

}  // namespace wafersim::mapping
