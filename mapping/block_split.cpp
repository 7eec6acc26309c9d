// How a block's GEMVs split their weights over its rows and columns (block.h).
#include <algorithm>
#include <stdexcept>

#include "mapping/block.h"

namespace wafersim::mapping {

namespace {

// Part `index` of `total` split into `parts` near-equal parts, lower indices taking the remainder.
uint64_t even_part(uint64_t total, uint64_t parts, uint64_t index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

// The root row's part when it takes `permille` thousandths of another row's.
uint64_t relieved_first(uint64_t total, uint32_t parts, uint32_t permille) {
  return total * permille / (permille + 1000ull * (parts - 1));
}

}  // namespace

void BlockGeometry::set_column_weights(const std::vector<uint64_t>& weights) {
  if (weights.size() != cols) throw std::logic_error("column weights for another block width");
  auto prefix = std::make_shared<std::vector<uint64_t>>(cols + 1, 0);
  for (uint32_t j = 0; j < cols; ++j) (*prefix)[j + 1] = (*prefix)[j] + weights[j];
  if (prefix->back() == 0) throw std::logic_error("column weights that sum to zero");
  column_prefix = std::move(prefix);
}

uint64_t BlockGeometry::row_share(uint64_t total, uint32_t i) const {
  if (row0_permille >= 1000 || rows == 1) return even_part(total, rows, i);
  const uint64_t first = relieved_first(total, rows, row0_permille);
  const uint32_t relieved = relieved_row;
  return i == relieved ? first : even_part(total - first, rows - 1, i < relieved ? i : i - 1);
}

uint64_t BlockGeometry::column_share(uint64_t total, uint32_t j) const {
  if (!column_prefix) return even_part(total, cols, j);
  // Cumulative rounding: the parts add up to `total` exactly.
  const std::vector<uint64_t>& prefix = *column_prefix;
  const unsigned __int128 sum = prefix.back();
  return uint64_t(total * (unsigned __int128)prefix[j + 1] / sum - total * (unsigned __int128)prefix[j] / sum);
}

uint64_t BlockGeometry::largest_row_share(uint64_t total) const {
  // The relieved row and the first of the others.
  return std::max(row_share(total, relieved_row), rows > 1 ? row_share(total, relieved_row == 0 ? 1 : 0) : 0);
}

uint64_t BlockGeometry::largest_column_share(uint64_t total) const {
  if (!column_prefix) return even_part(total, cols, 0);
  uint64_t largest = 0;
  for (uint32_t j = 0; j < cols; ++j) largest = std::max(largest, column_share(total, j));
  return largest;
}

}  // namespace wafersim::mapping
