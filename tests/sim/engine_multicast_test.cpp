// Row and column multicasts: each tile of the segment receives at the closed-form cycle.
#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/oracles/messages.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Four multicasts at once on a 40x40 grid: east along row 1, west along row 3,
// south down column 30, north up column 36; every receiver marks its own slot.
void check_multicasts(bool contention) {
  const uint32_t size = 40, bytes = 256;
  const HardwareSpec hw = wse3_like(size, size);
  ProgramSet set = empty_set(size, size);
  struct Segment {
    uint32_t x, y;
    Dir dir;
    uint32_t count;
  };
  const Segment segments[] = {
      {0, 1, Dir::East, 39}, {25, 3, Dir::West, 25}, {30, 5, Dir::South, 34}, {36, 39, Dir::North, 30}};
  uint32_t slot = 0;
  std::vector<std::pair<uint32_t, uint32_t>> slot_k;  // slot -> (segment, k)
  for (uint32_t s = 0; s < 4; ++s) {
    const Segment& seg = segments[s];
    place(set, seg.x, seg.y, {multicast(seg.dir, seg.count, bytes)});
    for (uint32_t k = 1; k <= seg.count; ++k) {
      const int32_t x = int32_t(seg.x) + (seg.dir == Dir::East ? int32_t(k) : seg.dir == Dir::West ? -int32_t(k) : 0);
      const int32_t y = int32_t(seg.y) + (seg.dir == Dir::South ? int32_t(k) : seg.dir == Dir::North ? -int32_t(k) : 0);
      place(set, uint32_t(x), uint32_t(y), {wait(1), mark(slot++)});
      slot_k.push_back({s, k});
    }
  }
  set.marks = slot;
  sim::EngineOptions options;
  options.contention = contention;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), options);
  for (uint32_t i = 0; i < slot; ++i) {
    INFO("segment " << slot_k[i].first << " tile k = " << slot_k[i].second);
    CHECK(result.marks[i][0].cycle == oracles::multicast_arrival_cycles(hw.fabric, slot_k[i].second, 0, bytes));
  }
  // The last tile of the row: ramp 2 + 39 hops + 64 body cycles + ramp 2.
  CHECK(result.marks[38][0].cycle == 107);
  CHECK(oracles::multicast_last_cycles(hw.fabric, 39, 0, bytes) == 107);
}

}  // namespace

TEST_CASE("row and column multicasts reach their k-th tile at the closed-form cycle", "[engine][multicast]") {
  check_multicasts(false);
}

TEST_CASE("a multicast alone on the fabric is unchanged by contention", "[engine][multicast]") {
  check_multicasts(true);
}

TEST_CASE("a multicast past the grid edge is reported with the tile", "[engine][multicast]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  place(set, 5, 2, {multicast(Dir::East, 3, 4)});
  try {
    sim::run_programs(hw, set, sim::SteadyInputs(), {});
    FAIL("expected an EngineError");
  } catch (const sim::EngineError& e) {
    const std::string message = e.what();
    CHECK(message.find("tile (x 5, y 2)") != std::string::npos);
    CHECK(message.find("multicasts east over 3 tiles") != std::string::npos);
  }
}
