// Region measurement against tile SRAM (measure_region.h).
#include "mapping/measure_region.h"

#include <algorithm>

#include "models/sram_ledger.h"

namespace wafersim::mapping {

namespace {

// Activation bytes of column j's tiles below row 1. Down a column they never
// grow (attention tiles past the positions of the largest context keep none)
// and take at most two values, so a bisection finds where they change.
uint64_t interior_activations(const Block& block, uint32_t j, uint64_t max_context, uint64_t stream_buffer) {
  const uint32_t rows = block.geo.rows;
  auto at = [&](uint32_t i) { return tile_sram(block, i, j, max_context, stream_buffer).activations; };
  const uint64_t top = at(2), bottom = at(rows - 1);
  if (top == bottom) return uint64_t(rows - 2) * top;
  uint32_t lo = 2, hi = rows - 1;  // at(lo) == top, at(hi) == bottom
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    (at(mid) == top ? lo : hi) = mid;
  }
  return uint64_t(hi - 2) * top + uint64_t(rows - hi) * bottom;
}

}  // namespace

uint64_t region_weight_bytes_placed(const Region& region) {
  uint64_t bytes = 0;
  for (const Block& block : region.blocks)
    for (const auto& step : block.steps) bytes += step->total_weight_bytes();
  return bytes;
}

FullestTile moved(FullestTile tile, const BlockGeometry& from, const BlockGeometry& to) {
  tile.wafer = to.wafer;
  tile.x = tile.x - from.x0 + to.x0;
  tile.y = tile.y - from.y0 + to.y0;
  return tile;
}

std::string overflow_report(const FullestTile& tile, const HardwareSpec& hw) {
  SramLedger ledger({tile.wafer, tile.x, tile.y}, hw.tile.sram_bytes);
  try {
    ledger.place("runtime", hw.tile.runtime_reserved_bytes);
    ledger.place("weights", tile.sram.weights);
    ledger.place("activation buffers", tile.sram.activations);
    ledger.place("KV cache", tile.sram.kv);
  } catch (const SramOverflow& overflow) {
    return overflow.what();
  }
  return "fits";
}

// Every tile's SRAM is checked without visiting every tile: block splits give
// rows from 1 on non-increasing shares (row 0 and the columns may be relieved,
// block.h), KV shares and attention buffers shrink with the offset down a
// column, and gather trees run on row 0 and column 0 only, so the fullest tile
// and the tightest context are on rows 0 and 1 or column 0; below row 1 a tile
// holds what the tile of row 1 in its column holds or less. Totals come from the steps.
RegionStats measure_region(const Region& region, const HardwareSpec& hw, uint64_t max_context, uint64_t stream_buffer,
                           uint32_t colors_available, FullestTile* fullest) {
  RegionStats stats;
  stats.max_context_tokens = UINT64_MAX;
  uint64_t activation_sum = 0;
  for (const Block& block : region.blocks) {
    const BlockGeometry& g = block.geo;
    auto visit = [&](uint32_t i, uint32_t j) {
      const TileSram sram = tile_sram(block, i, j, max_context, stream_buffer);
      const uint64_t used = hw.tile.runtime_reserved_bytes + sram.weights + sram.kv + sram.activations;
      activation_sum += sram.activations;
      if (used > stats.sram_peak_bytes) {
        stats.sram_peak_bytes = used;
        fullest->wafer = g.wafer;
        fullest->x = g.x(i, j);
        fullest->y = g.y(i, j);
        fullest->sram = sram;
      }
      const uint64_t fixed = hw.tile.runtime_reserved_bytes + sram.weights + sram.activations;
      const uint64_t free_bytes = fixed < hw.tile.sram_bytes ? hw.tile.sram_bytes - fixed : 0;
      for (const auto& step : block.steps)
        stats.max_context_tokens = std::min(stats.max_context_tokens, step->max_context(i, j, free_bytes));
    };
    const uint32_t edge_rows = std::min<uint32_t>(g.rows, 2);
    for (uint32_t i = 0; i < edge_rows; ++i)
      for (uint32_t j = 0; j < g.cols; ++j) visit(i, j);
    for (uint32_t i = edge_rows; i < g.rows; ++i) visit(i, 0);
    for (uint32_t j = 1; j < g.cols && g.rows > 2; ++j)
      activation_sum += interior_activations(block, j, max_context, stream_buffer);

    for (const auto& step : block.steps) {
      stats.weight_elements += step->total_weight_elements();
      stats.kv_bytes += step->total_kv_bytes(max_context);
      stats.patterns_peak = std::max(stats.patterns_peak, std::min(step->patterns(), colors_available));
      stats.relayed_patterns += step->relayed_patterns();
    }
    stats.tiles += g.tiles();
  }
  stats.weight_bytes = region_weight_bytes_placed(region);
  const uint64_t sum =
      stats.tiles * hw.tile.runtime_reserved_bytes + stats.weight_bytes + stats.kv_bytes + activation_sum;
  stats.sram_mean_bytes = stats.tiles ? sum / stats.tiles : 0;
  return stats;
}

}  // namespace wafersim::mapping
