#pragma once
// A rectangular block of tiles that runs one chain of steps, rooted at its
// local (0, 0). Local rows i run "down", columns j run "across"; which of x and
// y is "across" is the mapping.multicast_axis knob.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/tile_program.h"

namespace wafersim::mapping {

struct BlockGeometry {
  uint32_t wafer = 0;
  uint32_t x0 = 0, y0 = 0;  // global position of the root, local (0, 0)
  uint32_t rows = 1, cols = 1;
  bool across_is_x = true;

  uint32_t x(uint32_t i, uint32_t j) const { return across_is_x ? x0 + j : x0 + i; }
  uint32_t y(uint32_t i, uint32_t j) const { return across_is_x ? y0 + i : y0 + j; }
  uint32_t width_x() const { return across_is_x ? cols : rows; }
  uint32_t height_y() const { return across_is_x ? rows : cols; }
  Dir across() const { return across_is_x ? Dir::East : Dir::South; }
  Dir down() const { return across_is_x ? Dir::South : Dir::East; }
  // Global (dx, dy) of a move by di rows and dj columns.
  int32_t dx(int32_t di, int32_t dj) const { return across_is_x ? dj : di; }
  int32_t dy(int32_t di, int32_t dj) const { return across_is_x ? di : dj; }
  uint64_t tiles() const { return uint64_t(rows) * cols; }

  // Where a line of n tiles has its root: its first tile, or with middle roots
  // (mapping.line_root: middle) its middle one, so that reductions come from
  // both ends at once and multicasts leave both ways (WaferLLM's allreduce).
  // The block root is where the root row and the root column cross.
  bool middle_roots = false;
  uint32_t line_root(uint32_t n) const { return middle_roots && n > 0 ? (n - 1) / 2 : 0; }
  uint32_t root_i() const { return line_root(rows); }  // the root row
  uint32_t root_j() const { return line_root(cols); }  // the root column
  uint32_t root_x() const { return x(root_i(), root_j()); }
  uint32_t root_y() const { return y(root_i(), root_j()); }

  // How the block's GEMVs split their weights over the rows and columns. By
  // default evenly (lower indices take the remainder). Tiles that keep more
  // activation buffers than others can be given fewer weights (the compiler's
  // edge relief, mapping/compile.cpp): row `relieved_row` (the root row of
  // the plan that was relieved: the prefill keeps the decode's weights where
  // they are) a share of `row0_permille` thousandths of another row's, and the columns shares in proportion to
  // their weights (column_prefix: cumulative weights, cols + 1 entries).
  // Compute is charged the largest share.
  uint32_t row0_permille = 1000;
  uint32_t relieved_row = 0;
  std::shared_ptr<const std::vector<uint64_t>> column_prefix;  // null: even
  void set_column_weights(const std::vector<uint64_t>& weights);

  uint64_t row_share(uint64_t total, uint32_t i) const;
  uint64_t column_share(uint64_t total, uint32_t j) const;
  uint64_t largest_row_share(uint64_t total) const;
  uint64_t largest_column_share(uint64_t total) const;
  bool even_split() const { return row0_permille == 1000 && !column_prefix; }
};

}  // namespace wafersim::mapping
