// Contention: flows that share a link, a ramp or an off-wafer channel serialise,
// and the waiting shows up as Contention on the critical path.
#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/oracles/messages.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

TEST_CASE("two flows sharing links take exactly the serialised time", "[engine][contention]") {
  const HardwareSpec hw = wse3_like(16, 16);
  ProgramSet set = empty_set(16, 16);
  // Row 0: A goes (0,0) -> (4,0), B goes (1,0) -> (5,0); both send at cycle 0 and
  // share the links 1->2, 2->3, 3->4. A is processed first (lower tile id).
  place(set, 0, 0, {send(4, 0, 64)});
  place(set, 1, 0, {send(4, 0, 64)});
  place(set, 4, 0, {wait(1), mark(0)});
  place(set, 5, 0, {wait(1), mark(1)});
  // Row 3: one tile sends twice; the second message waits for the first to leave the ramp.
  place(set, 0, 3, {send(3, 0, 64), send(0, 3, 64)});
  place(set, 3, 3, {wait(1), mark(2)});
  place(set, 0, 6, {wait(1), mark(3)});
  // Around (10, 10): two messages reach one core at the same cycle from two sides.
  place(set, 8, 10, {send(2, 0, 64)});
  place(set, 10, 12, {send(0, -2, 64)});
  place(set, 10, 10, {wait(2), mark(4)});
  set.marks = 5;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});

  const uint64_t body = 16;  // 64 B over 4 B/cycle links
  // A is alone on its route: ramp 2 + 4 hops + 16 + ramp 2.
  CHECK(result.marks[0][0].cycle == 24);
  // A's head enters link 1->2 at cycle 3 (ramp 2, one hop) and its body holds
  // it until 3 + 16 = 19. B's head reaches that link, its first, at cycle 2 and
  // waits 17 cycles; then 4 hops, the body and ramp-off: 19 + 4 + 16 + 2 = 41,
  // i.e. B's closed form (24) plus the 17 cycles it waited.
  const uint64_t b_wait = 3 + body - 2;
  CHECK(result.marks[1][0].cycle == 41);
  CHECK(result.marks[1][0].cycle == oracles::point_to_point_cycles(hw.fabric, 4, 0, 0, 64) + b_wait);
  CHECK(result.marks[1][0].path[size_t(Category::Contention)] == b_wait);
  CHECK(result.marks[1][0].path[size_t(Category::Fabric)] == 24);

  // Own sends: the second leaves the ramp one body later.
  CHECK(result.marks[2][0].cycle == oracles::point_to_point_cycles(hw.fabric, 3, 0, 0, 64));
  CHECK(result.marks[3][0].cycle == body + oracles::point_to_point_cycles(hw.fabric, 0, 3, 0, 64));

  // Ejection: both heads reach (10, 10) at cycle 4; the second is taken off one body later.
  CHECK(result.marks[4][0].cycle == body + oracles::point_to_point_cycles(hw.fabric, 2, 0, 0, 64));
  CHECK(result.link_busy_peak > 0);
}

// Two pieces from one row to one column, each to its own row: along x first
// both cross the column's links; along y first (Task::y_first) they share none.
// Returns the two arrivals and what each would take alone.
struct TwoPieces {
  uint64_t arrival[2], alone[2];
};
TwoPieces two_pieces(bool y_first) {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  Task to_row_1 = send(-1, -4, 64), to_row_0 = send(-2, -5, 64);
  to_row_1.y_first = to_row_0.y_first = y_first;
  place(set, 1, 5, {to_row_1});
  place(set, 2, 5, {to_row_0});
  place(set, 0, 1, {wait(1), mark(0)});
  place(set, 0, 0, {wait(1), mark(1)});
  set.marks = 2;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  return {{result.marks[0][0].cycle, result.marks[1][0].cycle},
          {oracles::point_to_point_cycles(hw.fabric, -1, -4, 0, 64),
           oracles::point_to_point_cycles(hw.fabric, -2, -5, 0, 64)}};
}
TEST_CASE("routes with the y leg first share no link where x first would", "[engine][contention]") {
  const TwoPieces pieces = two_pieces(true);
  CHECK(pieces.arrival[0] == pieces.alone[0]);
  CHECK(pieces.arrival[1] == pieces.alone[1]);
}
TEST_CASE("routes along x first from one row to one column wait for each other", "[engine][contention]") {
  const TwoPieces pieces = two_pieces(false);
  CHECK(pieces.arrival[0] + pieces.arrival[1] > pieces.alone[0] + pieces.alone[1]);
}

// Four pieces from a row's tiles 0-3 to its tiles 4-7 (a hand-off between two
// lines on one row), once on row 0 by the plain routes, which all cross the
// links between tiles 3 and 4, and once on row 8 with piece k stepping k rows
// off the row (Task::sidestep), a row to itself. One run: marks 0-3 the plain
// pieces, 4-7 the spread ones.
std::vector<uint64_t> pieces_along_a_row(bool contention) {
  const HardwareSpec hw = wse3_like(16, 16);
  ProgramSet set = empty_set(16, 16);
  for (uint32_t row : {0u, 8u})
    for (int32_t k = 0; k < 4; ++k) {
      Task piece = send(4, 0, 64);
      piece.sidestep = row == 8 ? k : 0;
      place(set, uint32_t(k), row, {piece});
      place(set, uint32_t(k + 4), row, {wait(1), mark(uint32_t(k + (row == 8 ? 4 : 0)))});
    }
  set.marks = 8;
  sim::EngineOptions options;
  options.contention = contention;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), options);
  std::vector<uint64_t> arrivals;
  for (uint32_t k = 0; k < 8; ++k) arrivals.push_back(result.marks[k][0].cycle);
  return arrivals;
}
TEST_CASE("pieces moving along one row wait for each other unless each steps to its own row", "[engine][contention]") {
  const FabricParams fabric = wse3_like(16, 16).fabric;
  const std::vector<uint64_t> arrivals = pieces_along_a_row(true);
  // Spread, each takes exactly its own route's closed form.
  for (int32_t k = 0; k < 4; ++k) CHECK(arrivals[size_t(4 + k)] == oracles::sidestep_cycles(fabric, 4, k, 64));
  // On one row the last piece waits for the bodies before it.
  CHECK(arrivals[3] >= oracles::point_to_point_cycles(fabric, 4, 0, 0, 64) + 3 * 16);
  CHECK(arrivals[7] < arrivals[3]);
}
TEST_CASE("contention off: pieces with and without sidesteps take their routes' closed forms", "[engine]") {
  const FabricParams fabric = wse3_like(16, 16).fabric;
  const std::vector<uint64_t> arrivals = pieces_along_a_row(false);
  for (int32_t k = 0; k < 4; ++k) {
    CHECK(arrivals[size_t(k)] == oracles::point_to_point_cycles(fabric, 4, 0, 0, 64));
    CHECK(arrivals[size_t(4 + k)] == oracles::sidestep_cycles(fabric, 4, k, 64));
  }
}

TEST_CASE("a sidestep past the grid's edge is refused before the run", "[engine][contention]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  Task piece = send(4, 0, 64);
  piece.sidestep = -1;  // row -1 does not exist
  place(set, 0, 0, {piece});
  place(set, 4, 0, {wait(1), mark(0)});
  set.marks = 1;
  CHECK_THROWS_WITH(sim::run_programs(hw, set, sim::SteadyInputs(), {}),
                    Catch::Contains("routes through (x 0, y -1), outside the 8x8 grid"));
}

// A message held at its source reserves its destination's ejection ramp far
// ahead when it is finally sent; messages arriving earlier still use the
// ramp's idle gap in front of that reservation if they fit in it.
TEST_CASE("a message arriving before a far-ahead reservation of an ejection ramp uses the gap before it",
          "[engine][contention]") {
  const HardwareSpec hw = wse3_like(16, 16);
  ProgramSet set = empty_set(16, 16);
  // (0, 2) sends 64 KiB to its neighbour, then P to (8, 2): P waits 16,384 cycles on the injection ramp.
  place(set, 0, 2, {send(0, 1, 65536, 9), send(8, 0, 64, 1)});
  place(set, 0, 3, {wait(1, 9)});
  // Q (short) and R (too long for the gap) reach (8, 2) long before P does, but are sent after it.
  place(set, 8, 5, {send(0, -3, 64, 2)});
  place(set, 8, 6, {send(0, -4, 80000, 3)});
  place(set, 8, 2, {wait(1, 2), mark(0), wait(1, 1), mark(1), wait(1, 3), mark(2)});
  set.marks = 3;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  const uint64_t q = result.marks[0][0].cycle, p = result.marks[1][0].cycle, r = result.marks[2][0].cycle;
  CHECK(p == 16384 + oracles::point_to_point_cycles(hw.fabric, 8, 0, 0, 64));
  CHECK(q == oracles::point_to_point_cycles(hw.fabric, 0, -3, 0, 64));  // in the gap: as if alone
  CHECK(r == p + 80000 / 4);                                            // after P's reservation
}

TEST_CASE("messages between wafers serialise on the off-wafer channel", "[engine][contention][offwafer]") {
  const HardwareSpec hw = wse3_like(8, 8, 2);
  ProgramSet set = empty_set(8, 8, 2);
  place(set, 1, 1, {send(0, 0, 1360, 0, 1)}, 0);
  place(set, 2, 1, {send(0, 0, 1360, 0, 1)}, 0);
  place(set, 1, 1, {wait(1), mark(0)}, 1);
  place(set, 2, 1, {wait(1), mark(1)}, 1);
  set.marks = 2;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  // ramp 2 + latency 1100 + 1360 / 136 = 10 + ramp 2.
  REQUIRE(oracles::offwafer_cycles(hw, 1360) == 1114);
  CHECK(result.marks[0][0].cycle == 1114);
  CHECK(result.marks[0][0].path[size_t(Category::OffWafer)] == 1114);
  CHECK(result.marks[1][0].cycle == 1114 + 10);
  CHECK(result.marks[1][0].path[size_t(Category::Contention)] == 10);
}

TEST_CASE("a busy ejection ramp delays one tile of a multicast but not the tiles after it",
          "[engine][contention][multicast]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  // Row 0: tile 0 multicasts east over tiles 1, 2; tile 2 multicasts west over 1, 0.
  place(set, 0, 0, {multicast(Dir::East, 2, 64, 0), wait(1, 1), mark(3)});
  place(set, 1, 0, {wait(1, 0), mark(0), wait(1, 1), mark(1)});
  place(set, 2, 0, {multicast(Dir::West, 2, 64, 1), wait(1, 0), mark(2)});
  set.marks = 4;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  const uint64_t one_hop = oracles::multicast_arrival_cycles(hw.fabric, 1, 0, 64);  // 2 + 1 + 16 + 2
  const uint64_t two_hops = oracles::multicast_arrival_cycles(hw.fabric, 2, 0, 64);
  // Both heads reach tile 1 at cycle 3; the eastbound one (sent first) is taken off
  // first and holds tile 1's ejection ramp until 3 + 16 = 19.
  CHECK(result.marks[0][0].cycle == one_hop);
  CHECK(result.marks[1][0].cycle == 19 + 16 + 2);
  CHECK(result.marks[1][0].path[size_t(Category::Contention)] == 16);
  // Both heads went on through tile 1's router at once: the far ends are on time.
  CHECK(result.marks[2][0].cycle == two_hops);
  CHECK(result.marks[3][0].cycle == two_hops);
}
