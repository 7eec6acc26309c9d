// The wheel gives a band's events in time order and, within a cycle, in the
// order they were pushed, whether a bucket holds one event or many, whether
// they were pushed before their cycle was taken or while it runs (as
// Band::wake takes them), and whether they came through the far heap.
#include "sim/engine/timing_wheel.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

using wafersim::sim::TimingWheel;

TEST_CASE("the wheel gives events in time order and each cycle's in push order", "[engine]") {
  std::mt19937_64 rng(20261207);
  for (int trial = 0; trial < 50; ++trial) {
    const uint32_t ring_bits = 4 + uint32_t(trial % 5);  // windows of 16 to 256 cycles, so that many events go far
    TimingWheel wheel(ring_bits);
    std::vector<std::pair<uint64_t, uint32_t>> pushed;  // (time, event), in push order
    uint32_t next_event = 0;
    auto push = [&](uint64_t time) {
      wheel.push(time, next_event);
      pushed.emplace_back(time, next_event++);
    };
    // Few distinct times, so that buckets often hold several events.
    for (int i = 0; i < 200; ++i) push(rng() % 600);
    std::vector<std::pair<uint64_t, uint32_t>> taken;
    uint64_t now = 0;
    while (wheel.next_time(&now)) {
      wheel.advance_to(now);
      for (uint32_t node = wheel.take(now); node != TimingWheel::kEnd; node = wheel.take(now)) {
        while (node != TimingWheel::kEnd) {
          const uint32_t event = wheel.pop_node(node, &node);
          taken.emplace_back(now, event);
          // Some events push more at their own cycle (run in this wake) or later.
          if (event % 7 == 0 && next_event < 2000) push(now + (event % 3 == 0 ? 0 : rng() % 300));
        }
      }
    }
    std::vector<std::pair<uint64_t, uint32_t>> expected = pushed;
    std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    INFO("trial " << trial);
    REQUIRE(taken == expected);
  }
}
