// Exact detours (sim.exact_detours): on a repaired wafer the engine charges a
// message the extra hops of its own physical path, counted here by hand, with
// contention off and on. Each message runs on a wafer of its own (every wafer
// has the map's defects), so none waits for another's links.
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "models/wafer_repairs.h"
#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/oracles/messages.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

struct Route {
  uint32_t x, y;
  int32_t dx, dy;
  bool y_first;
  uint32_t extra_hops;  // of its own path, by hand
};
struct Fan {
  uint32_t x, y;
  Dir dir;
  std::vector<uint32_t> extra_hops;  // [k - 1]: of the path to its k-th tile
};

// The logical 8 x 6 grid of a physical 10 x 6 whose row 2 shifts past dead
// tiles at columns 1 and 3: its steps from logical column 0 to 1 and 1 to 2
// go round one each, and from logical column 2 on its tiles sit two columns
// right of rows 1 and 3, one hop more down a column each way.
const std::vector<Route> kRoutes = {
    {0, 2, 4, 0, false, 2},  // along row 2 past both (the table's worst for 4 hops: 2)
    {0, 0, 7, 0, false, 0},  // row 0 skips nothing (the table's worst for 7 hops: 2)
    {5, 0, 0, 5, false, 2},  // down column 5 across row 2
    {0, 2, 4, 3, false, 3},  // along row 2, then down column 4 from row 2
    {0, 2, 4, 3, true, 0},   // down column 0, then along row 5
};
const std::vector<Fan> kFans = {{0, 2, Dir::East, {1, 2, 2, 2}}, {6, 0, Dir::South, {0, 1, 2, 2}}};

void check_exact_detours(bool contention) {
  const uint32_t wafers = uint32_t(kRoutes.size() + kFans.size());
  HardwareSpec hw = wse3_like(8, 6, wafers);
  DefectMap map(10, 6);
  map.kill_tile(1, 2);
  map.kill_tile(3, 2);
  SpareParams spares;
  spares.columns = 2;
  spares.scheme = RepairScheme::Shift;
  hw.repairs = std::make_shared<const WaferRepairs>(DefectParams{}, spares, 8, 6, map);  // the map on every wafer
  hw.fabric.detours = hw.repairs->detours(wafers);
  FabricParams perfect = hw.fabric;
  perfect.detours = nullptr;

  ProgramSet set = empty_set(8, 6, wafers);
  uint32_t wafer = 0, slot = 0;
  for (const Route& route : kRoutes) {
    Task message = send(route.dx, route.dy, 64);
    message.y_first = route.y_first;
    place(set, route.x, route.y, {message}, wafer);
    place(set, uint32_t(int32_t(route.x) + route.dx), uint32_t(int32_t(route.y) + route.dy), {wait(1), mark(slot++)},
          wafer);
    ++wafer;
  }
  for (const Fan& fan : kFans) {
    const uint32_t count = uint32_t(fan.extra_hops.size());
    place(set, fan.x, fan.y, {multicast(fan.dir, count, 64)}, wafer);
    for (uint32_t k = 1; k <= count; ++k)
      place(set, fan.x + (fan.dir == Dir::East ? k : 0), fan.y + (fan.dir == Dir::South ? k : 0),
            {wait(1), mark(slot++)}, wafer);
    ++wafer;
  }
  set.marks = slot;
  sim::EngineOptions options;
  options.contention = contention;
  options.exact_detours = true;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), options);

  const uint64_t hop = hw.fabric.hop_latency_cycles;
  slot = 0;
  for (const Route& route : kRoutes) {
    INFO("route from (" << route.x << ", " << route.y << ") by (" << route.dx << ", " << route.dy << ")");
    CHECK(result.marks[slot++][0].cycle ==
          oracles::point_to_point_cycles(perfect, route.dx, route.dy, 0, 64) + route.extra_hops * hop);
  }
  for (const Fan& fan : kFans)
    for (uint32_t k = 1; k <= fan.extra_hops.size(); ++k) {
      INFO("multicast from (" << fan.x << ", " << fan.y << "), tile " << k);
      CHECK(result.marks[slot++][0].cycle ==
            oracles::multicast_arrival_cycles(perfect, k, 0, 64) + fan.extra_hops[k - 1] * hop);
    }
}

}  // namespace

TEST_CASE("exact detours, contention off: each message pays its own path's extra hops", "[engine][defects]") {
  check_exact_detours(false);
}

TEST_CASE("exact detours, contention on: each message pays its own path's extra hops", "[engine][defects]") {
  check_exact_detours(true);
}
