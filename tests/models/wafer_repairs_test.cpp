// Every wafer of a run has its own drawn defects (a map file gives all the
// same ones), its own repair, and the fabric charges the detours of all of them.
#include "models/wafer_repairs.h"

#include <catch2/catch.hpp>

using namespace wafersim;

namespace {

DefectParams drawn(double rate, uint64_t seed) {
  DefectParams params;
  params.tile_failure_rate = rate;
  params.seed = seed;
  return params;
}

SpareParams spares(uint32_t rows, uint32_t columns) {
  SpareParams out;
  out.rows = rows;
  out.columns = columns;
  return out;
}

}  // namespace

TEST_CASE("drawn defects differ from wafer to wafer, wafer 0 keeping the seed's own", "[defects][repair]") {
  const WaferRepairs repairs(drawn(0.004, 3), spares(6, 6), 60, 50);
  const DefectMap first = draw_defects(drawn(0.004, 3), 66, 56);
  CHECK(repairs.wafer(0).defects.retire == first.retire);
  CHECK(repairs.wafer(1).defects.retire != first.retire);
  CHECK(repairs.wafer(2).defects.retire != repairs.wafer(1).defects.retire);
  // The same wafer twice: the same draw, the same repair.
  CHECK(&repairs.wafer(1) == &repairs.wafer(1));
  const WaferRepairs again(drawn(0.004, 3), spares(6, 6), 60, 50);
  CHECK(again.wafer(2).defects.retire == repairs.wafer(2).defects.retire);
  CHECK(wafer_defect_seed(3, 0) == 3);
  CHECK(wafer_defect_seed(3, 1) != wafer_defect_seed(4, 1));
}

TEST_CASE("a map file gives every wafer the same defects", "[defects][repair]") {
  DefectMap map(10, 8);
  map.kill_tile(4, 3);
  const WaferRepairs repairs(DefectParams{}, spares(0, 2), 8, 8, map);
  CHECK(repairs.wafer(3).defects.retire == map.retire);
  CHECK(repairs.summary(4).dead_tiles == 4);
}

TEST_CASE("a run's detours and figures are its wafers' together", "[defects][repair]") {
  const WaferRepairs repairs(drawn(0.004, 3), spares(6, 6), 60, 50);
  const std::shared_ptr<const DetourTable> one = repairs.detours(1), three = repairs.detours(3);
  REQUIRE(one);
  REQUIRE(three);
  // The worst charge: the most any wafer's segment of the length meets.
  for (uint32_t hops = 0; hops < 110; ++hops) {
    uint32_t most = 0;
    for (uint32_t w = 0; w < 3; ++w) most = std::max(most, repairs.wafer(w).detours.of(hops));
    CHECK(three->of(hops) == most);
  }
  CHECK(one->extra_hops == repairs.wafer(0).detours.extra_hops);
  const RepairSummary summary = repairs.summary(3);
  CHECK(summary.dead_tiles == repairs.wafer(0).defects.dead_tiles + repairs.wafer(1).defects.dead_tiles +
                                  repairs.wafer(2).defects.dead_tiles);
  CHECK(summary.spare_rows_used == std::max({repairs.wafer(0).spare_rows_used(), repairs.wafer(1).spare_rows_used(),
                                             repairs.wafer(2).spare_rows_used()}));
  CHECK(summary.route_extra_hops_max == three->extra_hops.back());
  // The mean over every link of the three wafers: their own means, weighted alike (same grids).
  CHECK(summary.extra_hops_mean == Approx((repairs.wafer(0).extra_hops_mean + repairs.wafer(1).extra_hops_mean +
                                           repairs.wafer(2).extra_hops_mean) /
                                          3));
  // The mean charge pools every start of every wafer: no more than the worst.
  DefectParams mean = drawn(0.004, 3);
  mean.detour_charge = DetourCharge::Mean;
  const WaferRepairs typical(mean, spares(6, 6), 60, 50);
  for (uint32_t hops = 0; hops < 110; ++hops) CHECK(typical.detours(3)->of(hops) <= three->of(hops));
}

TEST_CASE("a wafer the spares cannot repair is named", "[defects][repair]") {
  // Seed 1 leaves wafer 0 few enough dead tiles for the spares, and a later wafer too many.
  const WaferRepairs repairs(drawn(0.01, 1), spares(1, 1), 20, 20);
  uint32_t short_one = 0;
  while (short_one < 50 && repairs.wafer(short_one).missing_tiles == 0) ++short_one;
  REQUIRE(short_one > 0);
  REQUIRE(short_one < 50);
  CHECK_FALSE(repairs.shortfall(short_one));
  const std::optional<std::string> why = repairs.shortfall(short_one + 1);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::StartsWith("wafer " + std::to_string(short_one) + ": ") &&
                       Catch::Contains("dead tiles are left after every spare is used"));
}
