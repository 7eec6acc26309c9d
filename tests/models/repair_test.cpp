// Repair: retired rows and columns, the logical grid, the detours it charges,
// and the refusal of more defects than spares.
#include "models/repair.h"

#include <catch2/catch.hpp>

#include "models/cost.h"
#include "models/repair_detours.h"
#include "models/route.h"
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
  CHECK(task_on_dead_tile(set, 0, repair).empty());
  repair.column_of[3] = 3;  // a repair that forgot the retired column
  CHECK(task_on_dead_tile(set, 0, repair) == "tile (3, 2) of wafer 0 runs a program on dead physical tile (3, 2)");
}

TEST_CASE("under the shift scheme a row shifts past its own dead tile into a spare column", "[defects][repair]") {
  const WaferRepair repair = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  CHECK(repair.retired_rows.empty());
  CHECK(repair.retired_columns.empty());
  CHECK(repair.row_of == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(repair.shifted_rows() == 1);
  CHECK(repair.spare_rows_used() == 0);
  CHECK(repair.spare_columns_used() == 1);
  CHECK(repair.physical_column(2, 2) == 2);
  CHECK(repair.physical_column(3, 2) == 4);
  CHECK(repair.physical_column(7, 2) == 8);
  CHECK(repair.physical_column(3, 1) == 3);  // the other rows keep their columns
  // Only the step from logical 2 to 3 of row 2 goes around the dead tile; the
  // rows above and below reach the shifted tiles over a diagonal link.
  CHECK(repair.detours.of(1) == 1);
  CHECK(repair.detours.of(100) == 1);
  CHECK(repair.extra_hops_mean == Approx(1.0 / 82.0));
  // The mean route meets less than the lines scheme's, which retires the whole column.
  const WaferRepair mean = repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6, DetourCharge::Mean, RepairScheme::Shift);
  CHECK(mean.detours.extra_hops == std::vector<uint32_t>(8, 0));
}

TEST_CASE("under the shift scheme tiles two columns apart cost a hop down the column", "[defects][repair]") {
  // Row 2 skips two tiles: from logical column 4 on it sits two columns right of row 1 and row 3.
  const WaferRepair repair =
      repair_wafer(dead_tiles(2, 0, {{1, 2}, {3, 2}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  CHECK(repair.row_skips[2] == std::vector<uint32_t>{1, 3});
  CHECK(repair.physical_column(1, 2) == 2);
  CHECK(repair.physical_column(2, 2) == 4);
  CHECK(repair.physical_column(5, 2) == 7);
  CHECK(repair.spare_columns_used() == 2);
  // Along row 2: logical 0 -> 1 and 1 -> 2 each pass one dead tile. Down columns 2..7: two steps of one extra hop.
  CHECK(repair.detours.of(1) == 1);
  CHECK(repair.detours.of(2) == 2);
  CHECK(repair.detours.of(100) == 2);
  // 2 extra hops along the row, 2 x 6 down the six columns whose row-2 tile sits two columns right.
  CHECK(repair.extra_hops_mean == Approx(14.0 / 82.0));
}

TEST_CASE("under the shift scheme a row with more dead tiles than spare columns is skipped", "[defects][repair]") {
  const WaferRepair repair =
      repair_wafer(dead_tiles(1, 1, {{1, 4}, {3, 4}, {2, 1}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  CHECK(repair.retired_rows == std::vector<uint32_t>{4});
  CHECK(repair.row_of == std::vector<uint32_t>{0, 1, 2, 3, 5, 6});
  CHECK(repair.missing_tiles == 0);
  CHECK(repair.spare_rows_used() == 1);
  CHECK(repair.shifted_rows() == 1);
  // Row 1 shifts past (2, 1); the step from row 3 to row 5 crosses the skipped row 4.
  CHECK(repair.physical_column(2, 1) == 3);
  CHECK(repair.detours.of(1) == 1);
  // Out of spare rows, the row stays in the grid with the tiles the spare column cannot take.
  const WaferRepair short_of_rows =
      repair_wafer(dead_tiles(1, 0, {{1, 4}, {3, 4}, {6, 4}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  CHECK(short_of_rows.missing_tiles == 2);
  CHECK(short_of_rows.row_skips[4] == std::vector<uint32_t>{1});
  // Dead tiles in a spare row the logical grid does not reach cost nothing.
  const WaferRepair spare =
      repair_wafer(dead_tiles(0, 1, {{1, 6}, {3, 6}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  CHECK(spare.missing_tiles == 0);
  CHECK(spare.spare_rows_used() == 0);
  CHECK(spare.detours.of(100) == 0);
}

TEST_CASE("the shift scheme's physical grid holds every logical tile on a live tile", "[defects][repair]") {
  DefectParams params;
  params.tile_failure_rate = 0.002;
  params.seed = 5;
  const WaferRepair repair =
      repair_wafer(draw_defects(params, 100, 104), 96, 100, DetourCharge::Worst, RepairScheme::Shift);
  REQUIRE(repair.defects.dead_tiles > 10);
  REQUIRE(repair.missing_tiles == 0);
  CHECK(repair.shifted_rows() > 5);
  const std::vector<PhysicalTile> tiles = physical_tiles(repair);
  uint64_t logical = 0;
  for (uint32_t y = 0; y < repair.logical_height(); ++y)
    for (uint32_t x = 0; x < repair.logical_width(); ++x) {
      const uint32_t column = repair.physical_column(x, y);
      CHECK_FALSE(repair.defects.retired(column, repair.row_of[y]));
      if (x > 0) CHECK(column > repair.physical_column(x - 1, y));
    }
  for (PhysicalTile tile : tiles) logical += tile == PhysicalTile::Logical;
  CHECK(logical == 96u * 100u);
  // A program on a logical tile that the repair put on a skipped one is found.
  ProgramSet set;
  set.grid_width = 96;
  set.grid_height = 100;
  set.programs.resize(1);
  set.tile_program.assign(96 * 100, 0);
  CHECK(task_on_dead_tile(set, 0, repair).empty());
  WaferRepair forgetful = repair;
  for (std::vector<uint32_t>& skips : forgetful.row_skips)
    if (!skips.empty()) {
      skips.clear();
      break;
    }
  CHECK_THAT(task_on_dead_tile(set, 0, forgetful), Catch::Contains("runs a program on dead physical tile"));
}

TEST_CASE("exact route detours charge the steps a route takes where it runs", "[defects][repair]") {
  // Lines: column 3 retired. A route meets it only if its x leg spans logical columns 2 and 3.
  const RouteDetours lines(repair_wafer(dead_tiles(1, 0, {{3, 2}}), 8, 6));
  CHECK(lines.route(0, 0, 2, 5, false) == 0);
  CHECK(lines.route(2, 0, 1, 0, false) == 1);
  CHECK(lines.route(5, 4, -4, -3, true) == 1);
  CHECK(lines.along_row(5, 7, 0) == 1);
  CHECK(lines.down_column(3, 0, 5) == 0);
  // Shift: row 2 skips physical columns 1 and 3. Its own steps 0 -> 1 and 1 -> 2 go round one tile each; down a
  // column from logical x = 2 on, rows 1 -> 2 and 2 -> 3 each take one more hop; elsewhere nothing.
  const WaferRepair shifted =
      repair_wafer(dead_tiles(2, 0, {{1, 2}, {3, 2}}), 8, 6, DetourCharge::Worst, RepairScheme::Shift);
  const RouteDetours shift(shifted);
  CHECK(shift.along_row(2, 0, 7) == 2);
  CHECK(shift.along_row(2, 2, 7) == 0);
  CHECK(shift.along_row(1, 0, 7) == 0);
  CHECK(shift.down_column(1, 0, 5) == 0);
  CHECK(shift.down_column(4, 0, 5) == 2);
  CHECK(shift.down_column(4, 2, 5) == 1);
  CHECK(shift.route(0, 2, 4, 3, false) == 2 + 1);  // along row 2 from 0 to 4, then down column 4 from row 2
  CHECK(shift.route(0, 2, 4, 3, true) == 0 + 0);   // down column 0, then along row 5
  // A sidestep's legs where they run: from (0, 1) one row down onto row 2 (column 0: 0), along it to 4 (2), back
  // up column 4 from row 2 to row 1 (1); with the step up instead, row 0 meets nothing.
  CHECK(shift.route(0, 1, send_route(4, 0, false, 1)) == 0 + 2 + 1);
  CHECK(shift.route(0, 1, send_route(4, 0, false, -1)) == 0);
  // The table's worst charge bounds every straight route of the length, not a turned one: 0 -> 4 along row 2,
  // then down column 4, meets 3 extra hops; the table charges 7 hops 2.
  for (uint32_t x = 0; x < 8; ++x)
    for (uint32_t y = 0; y < 6; ++y) {
      for (int32_t dx = -int32_t(x); dx < int32_t(8 - x); ++dx)
        CHECK(shift.route(x, y, dx, 0, false) <= shifted.detours.of(uint32_t(std::abs(dx))));
      for (int32_t dy = -int32_t(y); dy < int32_t(6 - y); ++dy)
        CHECK(shift.route(x, y, 0, dy, false) <= shifted.detours.of(uint32_t(std::abs(dy))));
    }
  CHECK(shifted.detours.of(7) == 2);
}
