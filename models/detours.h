#pragma once
// Extra physical hops a route pays for the retired rows and columns it
// crosses on a repaired wafer (models/repair.h). The closed form times steps
// by relative offsets, without knowing where a region sits, so both faces
// charge a route of h logical hops what a straight segment of h logical hops
// meets on this wafer, position-free (a turned route is charged as one
// straight route of its total length).
#include <cstdint>
#include <vector>

namespace wafersim {

// Worst: the most any segment of the length meets, wherever it starts (an
// upper bound for a straight route). Mean: the mean over every start, rounded
// to whole hops (a typical route). Either never less than a shorter route's.
enum class DetourCharge : uint8_t { Worst, Mean };

struct DetourTable {
  std::vector<uint32_t> extra_hops;  // by route length; the last entry holds for longer routes

  uint32_t of(uint32_t hops) const {
    return extra_hops.empty() ? 0 : extra_hops[hops < extra_hops.size() ? hops : extra_hops.size() - 1];
  }
};

}  // namespace wafersim
