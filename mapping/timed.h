#pragma once
// A cycle together with the critical path that led to it, split by category:
// the closed-form counterpart of the engine's per-tile path accounting.
#include <cstdint>

#include "models/cycle_limit.h"
#include "models/tile_program.h"

namespace wafersim::mapping {

struct Timed {
  uint64_t cycle = 0;
  CriticalPath path{};

  Timed after(uint64_t cycles, Category category) const {
    Timed next = *this;
    next.cycle = add_cycles(next.cycle, cycles);
    next.path[size_t(category)] += cycles;
    return next;
  }
  // This followed by a span measured from zero.
  Timed then(const Timed& span) const {
    Timed next = *this;
    next.cycle = add_cycles(next.cycle, span.cycle);
    for (size_t c = 0; c < path.size(); ++c) next.path[c] += span.path[c];
    return next;
  }
  bool operator==(const Timed& other) const { return cycle == other.cycle && path == other.path; }
  bool operator!=(const Timed& other) const { return !(*this == other); }
};

// A cycle far from 0 to time spans from: a closed form's times are sums and
// latests of times, so a span is the same from any start, except that a
// stream's tail leaving at cycle 0 would read as no stream at all
// (stream_tail_departure). Far above, too, any time not timed from it.
constexpr uint64_t kFarCycle = uint64_t(1) << 40;

// The later of two; on a tie the first, as a tile keeps its own path when the
// message it waits for is not late.
inline const Timed& later(const Timed& first, const Timed& second) {
  return second.cycle > first.cycle ? second : first;
}

}  // namespace wafersim::mapping
