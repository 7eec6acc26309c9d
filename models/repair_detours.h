#pragma once
// The detours a repair leaves (docs/DEFECTS.md): the extra physical hops of
// every step along each logical row and down each logical column, the
// segment statistics a position-free DetourTable is made of, the table over a
// run's wafers, and the exact detour of one route where it runs.
#include <cstdint>
#include <utility>
#include <vector>

#include "models/detours.h"
#include "models/repair.h"
#include "models/route.h"

namespace wafersim {

// The segment statistics of a repaired wafer's x and y axes (WaferRepair::Segments).
std::pair<WaferRepair::Segments, WaferRepair::Segments> repair_segments(const WaferRepair& repair);

// The detour table of a run over `wafers` (their segments together: the worst
// over all of them, or the mean over every start on every one), and the extra
// hops per logical link over all their links.
DetourTable detour_table(const std::vector<const WaferRepair*>& wafers, DetourCharge charge);
double extra_hops_mean(const std::vector<const WaferRepair*>& wafers);

// Extra physical hops of a logical route, exact to where it runs on the
// repaired wafer, where DetourTable charges every route of a length alike:
// its leg along its row plus its leg down its column, each the sum of its
// steps' extra hops (prefix sums per logical row and column, O(1) a route).
// The engine charges these with sim.exact_detours (docs/DEFECTS.md).
class RouteDetours {
 public:
  explicit RouteDetours(const WaferRepair& repair);

  // From logical (x0, y) to (x1, y), and from (x, y0) to (x, y1).
  uint32_t along_row(uint32_t y, uint32_t x0, uint32_t x1) const;
  uint32_t down_column(uint32_t x, uint32_t y0, uint32_t y1) const;
  // From logical (x, y) by (dx, dy): x first, or y first.
  uint32_t route(uint32_t x, uint32_t y, int32_t dx, int32_t dy, bool y_first) const;
  // From logical (x, y) along a route's legs (models/route.h).
  uint32_t route(uint32_t x, uint32_t y, const SendRoute& path) const;

 private:
  uint32_t width_, height_;
  std::vector<uint32_t> row_prefix_;     // [y * width + x]: extra hops from (0, y) to (x, y)
  std::vector<uint32_t> column_prefix_;  // [x * height + y]: extra hops from (x, 0) to (x, y)
};

}  // namespace wafersim
