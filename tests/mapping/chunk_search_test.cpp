// mapping.prefill_chunk: fastest_fitting's search on curves made up here: a
// minimum between rungs, at either end, on a jagged stretch, far up a long
// range, and the number of chunks it times.
#include "mapping/chunk_search.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>

#include <catch2/catch.hpp>

using namespace wafersim::mapping;

namespace {

// The search on `curve`, counting the distinct chunks it timed.
uint64_t search(uint64_t largest, const std::function<uint64_t(uint64_t)>& curve, size_t* timed = nullptr) {
  std::set<uint64_t> asked;
  const uint64_t chosen = fastest_chunk(largest, [&](uint64_t chunk) {
    REQUIRE(chunk >= 1);
    REQUIRE(chunk <= largest);
    asked.insert(chunk);
    return curve(chunk);
  });
  if (timed) *timed = asked.size();
  return chosen;
}

// A V with its point at `best`.
std::function<uint64_t(uint64_t)> v_at(uint64_t best) {
  return [best](uint64_t chunk) { return 1000 + (chunk > best ? chunk - best : best - chunk); };
}

}  // namespace

TEST_CASE("the chunk search takes the only chunk, or the faster of two", "[mapping][prefill][chunk search]") {
  CHECK(search(1, v_at(1)) == 1);
  CHECK(search(2, v_at(1)) == 1);
  CHECK(search(2, v_at(2)) == 2);
}

TEST_CASE("the chunk search finds a minimum between rungs and at either end", "[mapping][prefill][chunk search]") {
  for (uint64_t best : {1, 5, 7, 10, 17, 23, 31, 33}) {
    INFO("best " << best);
    CHECK(search(33, v_at(best)) == best);
  }
  CHECK(search(1000, [](uint64_t chunk) { return 5000 - chunk; }) == 1000);  // larger is always faster
  CHECK(search(1000, [](uint64_t chunk) { return 5000 + chunk; }) == 1);     // smaller is always faster
}

TEST_CASE("between close rungs the chunk search times every chunk, so a jagged minimum is found",
          "[mapping][prefill][chunk search]") {
  // Padded prompts make the time jagged: 10 is fastest, 11 slower than 12.
  const std::function<uint64_t(uint64_t)> jagged = [](uint64_t chunk) -> uint64_t {
    switch (chunk) {
      case 10: return 900;
      case 11: return 1300;
      case 12: return 1000;
      default: return 2000 + (chunk > 12 ? chunk - 12 : 12 - chunk);
    }
  };
  CHECK(search(15, jagged) == 10);
  CHECK(search(40, jagged) == 10);
}

TEST_CASE("the chunk search on a long range times a few dozen chunks and ends at a smooth minimum",
          "[mapping][prefill][chunk search]") {
  for (uint64_t best : {40, 777, 300001, 999999}) {
    INFO("best " << best);
    size_t timed = 0;
    CHECK(search(1000000, v_at(best), &timed) == best);
    CHECK(timed <= 100);
  }
}

TEST_CASE("on a tie the chunk search takes the larger chunk", "[mapping][prefill][chunk search]") {
  CHECK(search(20, [](uint64_t) { return 7; }) == 20);
  CHECK(search(5000, [](uint64_t chunk) { return chunk < 100 ? 10 : 5; }) == 5000);
  // A flat bottom from 50 to 60 of a long range: its top end.
  CHECK(search(5000, [](uint64_t chunk) -> uint64_t {
          return chunk < 50 ? 100 - chunk : chunk > 60 ? chunk : 50;
        }) == 60);
}
