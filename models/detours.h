#pragma once
// Extra physical hops a route pays for the retired rows and columns it
// crosses on a repaired wafer (models/repair.h). The closed form times steps
// by relative offsets, without knowing where a region sits, so both faces
// charge a route of h logical hops the most that any straight segment of h
// logical hops meets on this wafer (an upper bound for straight routes; a
// turned route is charged as one straight route of its total length).
#include <cstdint>
#include <vector>

namespace wafersim {

struct DetourTable {
  std::vector<uint32_t> extra_hops;  // by route length; the last entry holds for longer routes

  uint32_t of(uint32_t hops) const {
    return extra_hops.empty() ? 0 : extra_hops[hops < extra_hops.size() ? hops : extra_hops.size() - 1];
  }
};

}  // namespace wafersim
