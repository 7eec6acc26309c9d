#include <stdexcept>

#include <catch2/catch.hpp>

#include "models/fabric.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;

TEST_CASE("a route takes one colour on every router it crosses, ends included", "[fabric][colors]") {
  ColorMap colors(8, 8, testing::wse3_like(8, 8).fabric);
  colors.add_route(1, 1, 3, 2);  // routers (1,1) (2,1) (3,1) (3,2)
  CHECK(colors.colors_used(1, 1) == 1);
  CHECK(colors.colors_used(2, 1) == 1);
  CHECK(colors.colors_used(3, 1) == 1);
  CHECK(colors.colors_used(3, 2) == 1);
  CHECK(colors.colors_used(1, 2) == 0);
  colors.add_multicast(0, 1, Dir::East, 4);  // routers (0..4, 1)
  CHECK(colors.colors_used(2, 1) == 2);
  CHECK(colors.colors_used(4, 1) == 1);
  CHECK(colors.peak() == 2);
  CHECK(colors.oversubscribed().empty());
  CHECK(colors.overflow_message().empty());
}

TEST_CASE("routers above the budget of colors - colors_reserved are reported", "[fabric][colors]") {
  const FabricParams fabric = testing::wse3_like(8, 8).fabric;  // 24 colours, 3 reserved
  ColorMap colors(8, 8, fabric);
  REQUIRE(colors.budget() == 21);
  for (int i = 0; i < 21; ++i) colors.add_route(0, 3, 7, 3);
  CHECK(colors.oversubscribed().empty());
  colors.add_route(2, 0, 2, 7);  // crosses row 3 at (2, 3): 22 colours there
  colors.add_route(2, 0, 2, 7);
  const std::vector<ColorOverflow> over = colors.oversubscribed();
  REQUIRE(over.size() == 1);
  CHECK(over[0].x == 2);
  CHECK(over[0].y == 3);
  CHECK(over[0].colors_used == 23);
  CHECK(colors.overflow_message() == "1 router(s) exceed the 21 colours available; worst (2, 3) carries 23");
}

TEST_CASE("a route needs a relay at each full router strictly between its ends", "[fabric][colors]") {
  ColorMap colors(8, 8, testing::wse3_like(8, 8).fabric);
  for (int i = 0; i < 21; ++i) {
    colors.add_route(3, 0, 3, 7);  // fills column 3
    colors.add_route(5, 5, 5, 5);  // fills router (5, 5) only
  }
  CHECK(colors.relays_needed(0, 2, 7, 2) == 1);  // crosses (3, 2)
  CHECK(colors.relays_needed(0, 5, 5, 5) == 1);  // crosses (3, 5); (5, 5) is its own end
  CHECK(colors.relays_needed(3, 1, 3, 6) == 4);  // (3,2)..(3,5); the ends do not relay
  CHECK(colors.relays_needed(0, 0, 2, 7) == 0);
  CHECK_THROWS_AS(colors.add_route(0, 0, 8, 0), std::out_of_range);
  CHECK_THROWS_AS(colors.add_multicast(6, 0, Dir::East, 2), std::out_of_range);
}
