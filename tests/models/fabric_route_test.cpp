#include <catch2/catch.hpp>

#include "models/fabric.h"

using namespace wafersim;

TEST_CASE("xy routes go along x first, then y, one link per hop", "[fabric]") {
  const Route route = xy_route(2, 5, 4, 2);
  REQUIRE(route.hops == 5);
  CHECK(route.turns == 1);
  const std::vector<Link> expected = {
      {2, 5, Dir::East}, {3, 5, Dir::East}, {4, 5, Dir::North}, {4, 4, Dir::North}, {4, 3, Dir::North}};
  CHECK(route.links == expected);
}

TEST_CASE("straight routes have no turn; a route to itself has no link", "[fabric]") {
  const Route west = xy_route(7, 1, 3, 1);
  CHECK(west.hops == 4);
  CHECK(west.turns == 0);
  CHECK(west.links.front() == Link{7, 1, Dir::West});
  CHECK(west.links.back() == Link{4, 1, Dir::West});
  const Route south = xy_route(0, 0, 0, 3);
  CHECK(south.turns == 0);
  CHECK(south.links.back() == Link{0, 2, Dir::South});
  const Route none = xy_route(5, 5, 5, 5);
  CHECK(none.hops == 0);
  CHECK(none.links.empty());
}

TEST_CASE("a route's hops are |dx| + |dy| everywhere on a grid", "[fabric]") {
  for (uint32_t sx = 0; sx < 6; ++sx)
    for (uint32_t sy = 0; sy < 6; ++sy)
      for (uint32_t tx = 0; tx < 6; ++tx)
        for (uint32_t ty = 0; ty < 6; ++ty) {
          const Route route = xy_route(sx, sy, tx, ty);
          const uint32_t hops = (sx > tx ? sx - tx : tx - sx) + (sy > ty ? sy - ty : ty - sy);
          REQUIRE(route.hops == hops);
          REQUIRE(route.links.size() == hops);
          // Consecutive links chain: each starts where the previous one ends.
          for (size_t i = 1; i < route.links.size(); ++i) {
            const Link& a = route.links[i - 1];
            REQUIRE(int64_t(route.links[i].x) == int64_t(a.x) + dir_dx(a.dir));
            REQUIRE(int64_t(route.links[i].y) == int64_t(a.y) + dir_dy(a.dir));
          }
        }
}
