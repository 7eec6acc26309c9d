// Repair: retired rows and columns, the logical grid, the detours it charges,
// and the refusal of more defects than spares.
#include "models/repair.h"

#include <catch2/catch.hpp>

#include "models/cost.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;

namespace {

// A physical grid of the logical 8 x 6 and its spares, with the given dead tiles.
DefectMap dead_tiles(uint32_t spare_columns, uint32_t spare_rows, std::vector<std::pair<uint32_t, uint32_t>> tiles) {
  DefectMap map(8 + spare_columns, 6 + spare_rows);
  for (const auto& [x, y] : tiles) map.kill_tile(x, y);
  return map;
}

}  // namespace

TEST_CASE("a dead tile retires its column and the logical grid skips it", "[defects][repair]") {
  const WaferRepair repair = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6);
  CHECK(repair.retired_columns == std::vector<uint32_t>{3});
  CHECK(repair.spare_rows_used() == 0);
  CHECK(repair.column_of == std::vector<uint32_t>{0, 1, 2, 4, 5, 6, 7, 8});
  CHECK(repair.row_of == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
  // One logical hop can cross the retired column: every length pays one more hop.
  CHECK(repair.detours.of(0) == 0);
  CHECK(repair.detours.of(1) == 1);
  CHECK(repair.detours.of(7) == 1);
  CHECK(repair.detours.of(100) == 1);
  // One of the 7 column boundaries of 6 rows, over 7 x 6 + 8 x 5 links.
  CHECK(repair.extra_hops_mean == Approx(6.0 / 82.0));
}

TEST_CASE("the mean charge is what a route of each length meets on average", "[defects][repair]") {
  const WaferRepair mean = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6, DetourCharge::Mean);
  // Of the 7 one-hop segments along x, 1 crosses the retired column (1/7 rounds to 0); of the 5 three-hop ones, 3.
  CHECK(mean.detours.extra_hops == std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 1, 1});
  const WaferRepair worst = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6);
  for (uint32_t hops = 0; hops < 10; ++hops) CHECK(mean.detours.of(hops) <= worst.detours.of(hops));
  CHECK(mean.column_of == worst.column_of);
}

TEST_CASE("a line with more dead tiles than the other direction's spares is retired whole", "[defects][repair]") {
  // Row 4 holds three dead tiles and there is one spare column: only its row can cover them.
  const WaferRepair repair = repair_wafer(dead_tiles(1, 1, {{1, 4}, {3, 4}, {6, 4}, {2, 1}}), 8, 6);
  CHECK(repair.retired_rows == std::vector<uint32_t>{4});
  CHECK(repair.retired_columns == std::vector<uint32_t>{2});
  CHECK(repair.row_of == std::vector<uint32_t>{0, 1, 2, 3, 5, 6});
  CHECK(repair.column_of == std::vector<uint32_t>{0, 1, 3, 4, 5, 6, 7, 8});
  CHECK(repair.detours.of(1) == 1);
}

TEST_CASE("defects in the unused spares cost no detour", "[defects][repair]") {
  const WaferRepair repair = repair_wafer(dead_tiles(0, 2, {{5, 7}}), 8, 6);
  CHECK(repair.spare_rows_used() == 1);
  CHECK(repair.row_of == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(repair.detours.of(100) == 0);
  CHECK(repair.extra_hops_mean == 0);
}

TEST_CASE("more dead tiles than the spares can retire are counted as missing", "[defects][repair]") {
  const WaferRepair short_of_one = repair_wafer(dead_tiles(1, 0, {{1, 1}, {4, 3}, {6, 5}}), 8, 6);
  CHECK(short_of_one.missing_tiles == 2);
  CHECK_THAT(repair_shortfall(short_of_one), Catch::StartsWith("2 dead tiles are left after every spare is used") &&
                                                 Catch::Contains("the 8 x 6 logical grid misses 2 tiles"));
  CHECK(repair_wafer(dead_tiles(0, 0, {{0, 0}}), 8, 6).missing_tiles == 1);
  CHECK(repair_wafer(dead_tiles(1, 0, {{1, 1}}), 8, 6).missing_tiles == 0);
}

TEST_CASE("repair is deterministic", "[defects][repair]") {
  DefectParams params;
  params.tile_failure_rate = 0.001;
  params.seed = 11;
  const WaferRepair a = repair_wafer(draw_defects(params, 110, 110), 96, 100);
  const WaferRepair b = repair_wafer(draw_defects(params, 110, 110), 96, 100);
  CHECK(a.defects.dead_tiles > 5);
  CHECK(a.column_of == b.column_of);
  CHECK(a.row_of == b.row_of);
  CHECK(a.detours.extra_hops == b.detours.extra_hops);
  // The repaired grid holds no dead tile.
  for (uint32_t y : a.row_of)
    for (uint32_t x : a.column_of) CHECK_FALSE(a.defects.retired(x, y));
}

TEST_CASE("a message pays its route length's detour in the shared cost function", "[defects][repair]") {
  HardwareSpec hw = testing::tiny();
  const uint64_t perfect = message_cycles(hw.fabric, 5, 1, 0, 64);
  auto repair = std::make_shared<const WaferRepair>(repair_wafer(dead_tiles(2, 0, {{2, 0}, {5, 3}}), 8, 6));
  hw.fabric.detours = std::shared_ptr<const DetourTable>(repair, &repair->detours);
  CHECK(repair->detours.of(1) == 1);
  CHECK(repair->detours.of(4) == 2);  // logical columns 1 to 5 cross both retired columns
  CHECK(message_cycles(hw.fabric, 5, 1, 0, 64) == perfect + 2 * hw.fabric.hop_latency_cycles);
  CHECK(detour_cycles(hw.fabric, 0) == 0);
}

TEST_CASE("a program on a dead physical tile is found", "[defects][repair]") {
  WaferRepair repair = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6);
  ProgramSet set;
  set.grid_width = 8;
  set.grid_height = 6;
  set.programs.resize(1);
  set.tile_program.assign(48, ProgramSet::kIdle);
  set.tile_program[2 * 8 + 3] = 0;  // logical (3, 2) sits on physical (4, 2)
  CHECK(task_on_dead_tile(set, repair).empty());
  repair.column_of[3] = 3;  // a repair that forgot the retired column
  CHECK(task_on_dead_tile(set, repair) == "tile (3, 2) of wafer 0 runs a program on dead physical tile (3, 2)");
}
