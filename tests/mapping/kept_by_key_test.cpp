// KeptByKey: every value kept is found under its key after the table grows,
// none is found that was not kept, and reaching the bound drops them all.
#include "mapping/kept_by_key.h"

#include <cstdint>
#include <map>
#include <random>

#include <catch2/catch.hpp>

using wafersim::mapping::KeptByKey;

TEST_CASE("kept values are found by their keys until the bound drops them", "[closed form]") {
  std::mt19937_64 rng(7);
  KeptByKey<uint64_t> kept(1000);
  std::map<uint64_t, uint64_t> reference;
  for (int i = 0; i < 999; ++i) {
    // Keys that collide in their low and high bits alike, and random ones.
    const uint64_t key = i % 3 == 0 ? uint64_t(i + 1) << 48 : i % 3 == 1 ? uint64_t(i + 1) : (rng() | 1);
    if (reference.count(key)) continue;
    kept.insert(key) = key * 3;
    reference[key] = key * 3;
  }
  for (const auto& [key, value] : reference) {
    const uint64_t* found = kept.find(key);
    REQUIRE(found != nullptr);
    CHECK(*found == value);
  }
  CHECK(kept.find(12345678901ull) == nullptr);
  // The bound reached: the next insert drops everything before it.
  while (reference.size() < 1000) {
    const uint64_t key = rng() | 1;
    if (reference.count(key)) continue;
    kept.insert(key) = 1;
    reference[key] = 1;
  }
  kept.insert(42) = 7;
  CHECK(*kept.find(42) == 7);
  CHECK(kept.find(reference.begin()->first) == nullptr);
}
