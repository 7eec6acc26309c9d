#pragma once
// WSE-3 tile and fabric figures (models/presets/wse3.yaml) on a grid of the
// test's choosing, written out so the tests do not depend on the config loader.
#include <cstdint>

#include "models/hardware.h"

namespace wafersim::testing {

inline HardwareSpec wse3_like(uint32_t grid_width = 762, uint32_t grid_height = 1176, uint32_t wafers = 1) {
  HardwareSpec hw;
  hw.name = "test";
  hw.grid_width = grid_width;
  hw.grid_height = grid_height;
  hw.clock_ghz = 1.1;
  hw.wafers = wafers;
  hw.tile = {49152, 4176, 16, 8, 2, 8, 16, 8, 7};
  hw.fabric = {4, 1, 1, 2, 2, 24, 3, 30, nullptr};
  hw.offwafer = {1100, 136};
  return hw;
}

// The tiny preset: 16 x 16 tiles of the same kind.
inline HardwareSpec tiny() { return wse3_like(16, 16); }

}  // namespace wafersim::testing
