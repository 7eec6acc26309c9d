// The closed form counts cycles in 64 bits: a sum that would wrap around is
// refused (CycleLimitError), never reported as a small number.
#include <cstdint>

#include <catch2/catch.hpp>

#include "mapping/timed.h"

using namespace wafersim;
using wafersim::mapping::Timed;

TEST_CASE("closed-form cycles that would pass 2^64 are refused, not wrapped", "[mapping][limit]") {
  const Timed near_end = Timed{}.after(UINT64_MAX - 10, Category::OffWafer);
  CHECK(near_end.after(10, Category::Compute).cycle == UINT64_MAX);
  CHECK_THROWS_AS(near_end.after(11, Category::Compute), CycleLimitError);
  CHECK_THROWS_AS(near_end.then(Timed{}.after(11, Category::Fabric)), CycleLimitError);
  CHECK(near_end.then(Timed{}.after(10, Category::Fabric)).cycle == UINT64_MAX);
}
