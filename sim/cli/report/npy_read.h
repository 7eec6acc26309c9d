#pragma once
// Reads back the two-dimensional .npy arrays `--heatmaps` writes (sim/cli/npy.h:
// <f8, <u8 or <i4, little-endian, C order), as doubles to draw.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::cli {

struct NpyGrid {
  uint64_t height = 0;
  uint64_t width = 0;
  std::vector<double> values;  // row after row, height * width of them

  double at(uint64_t row, uint64_t column) const { return values[row * width + column]; }
};

// Throws CommandError (exit 2) naming `path` when it cannot be read or is not
// such an array.
NpyGrid read_npy_grid(const std::string& path);

}  // namespace wafersim::cli
