// A tile id's row and x without a division (TilePlace) equal the division's,
// for every width a grid can have and tile ids up to the largest 32-bit one.
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/world.h"

using wafersim::sim::TilePlace;

TEST_CASE("a tile's row and x by multiplication equal the division's", "[engine]") {
  std::mt19937_64 rng(20261207);
  uint64_t compared = 0;
  for (uint32_t width : {1u, 2u, 3u, 7u, 10u, 757u, 762u, 1024u, 4093u, 65535u}) {
    const TilePlace place(width);
    std::vector<uint64_t> tiles{0, 1, UINT32_MAX, UINT32_MAX - 1};
    // Around every kind of row boundary: the last tile of a row and the first of the next.
    for (uint64_t row : {uint64_t(1), uint64_t(2), uint64_t(1000), uint64_t(UINT32_MAX / width)})
      for (int64_t offset = -2; offset <= 2; ++offset) tiles.push_back(row * width + uint64_t(offset));
    for (int draw = 0; draw < 20000; ++draw) tiles.push_back(rng() & UINT32_MAX);
    for (uint64_t id : tiles) {
      if (id > UINT32_MAX) continue;
      const uint32_t tile = uint32_t(id);
      INFO("width " << width << ", tile " << tile);
      REQUIRE(place.row(tile) == tile / width);
      REQUIRE(place.x(tile) == tile % width);
      ++compared;
    }
  }
  CHECK(compared > 200000);
}
