#include "mapping/tile_sram.h"

#include <algorithm>

#include "models/dtype.h"

namespace wafersim::mapping {

TileSram tile_sram(const Block& block, uint32_t i, uint32_t j, uint64_t max_context, uint64_t stream_buffer) {
  TileSram sram;
  uint64_t kept = 0;  // one residual stream, whichever steps write it
  for (const auto& step : block.steps) {
    const uint64_t elements = step->weight_elements(i, j), biases = step->bias_elements(i, j);
    sram.weight_elements += elements + biases;
    sram.weights += dtype_bytes(step->weight_dtype(), elements) + dtype_bytes(step->bias_dtype(), biases);
    sram.kv += step->kv_bytes(i, j, max_context);
    sram.activations = std::max(sram.activations, step->activation_bytes(i, j));
    kept = std::max(kept, step->kept_bytes(i, j));
  }
  sram.activations += kept;
  if (i == 0 && j == 0) sram.activations += stream_buffer;
  return sram;
}

SramGrid sram_grid(const Plan& plan) {
  const ProgramSet& set = plan.programs;
  const size_t tiles = size_t(set.tiles());
  SramGrid grid;
  grid.weights.assign(tiles, 0);
  grid.kv.assign(tiles, 0);
  grid.activations.assign(tiles, 0);
  grid.region.assign(tiles, -1);
  const uint64_t max_context = plan.workload.max_context();
  for (size_t r = 0; r < plan.regions.size(); ++r)
    for (const Block& block : plan.regions[r].blocks) {
      const BlockGeometry& g = block.geo;
      for (uint32_t i = 0; i < g.rows; ++i)
        for (uint32_t j = 0; j < g.cols; ++j) {
          const TileSram sram = tile_sram(block, i, j, max_context, plan.options.stream_buffer_bytes);
          const size_t tile = (size_t(g.wafer) * set.grid_height + g.y(i, j)) * set.grid_width + g.x(i, j);
          grid.weights[tile] += sram.weights;
          grid.kv[tile] += sram.kv;
          grid.activations[tile] += sram.activations;
          grid.region[tile] = int32_t(r);
        }
    }
  return grid;
}

}  // namespace wafersim::mapping
