#pragma once
// Makes every tile visible in the SystemC hierarchy (band.tile names) at the
// least cost: the object holds only its tile id; the tile's state lives in the
// World's flat arrays.
#include <cstdint>
#include <systemc>

namespace wafersim::sim {

class TileObject : public sc_core::sc_object {
 public:
  TileObject(const char* name, uint32_t tile) : sc_core::sc_object(name), tile_(tile) {}
  const char* kind() const override { return "wafersim_tile"; }
  uint32_t tile() const { return tile_; }

 private:
  uint32_t tile_;
};

}  // namespace wafersim::sim
