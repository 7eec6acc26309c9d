// Single messages, contention off and on: the engine equals the closed form.
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/oracles/messages.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

struct Case {
  int32_t dx, dy;
  uint32_t bytes, relays;
};

// Every (distance, size) case gets its own source and destination tiles; with
// contention off the flows cannot disturb each other, so one run checks them all.
void run_cases(const std::vector<Case>& cases, bool contention) {
  const uint32_t width = 160, height = 160;
  const HardwareSpec hw = wse3_like(width, height);
  ProgramSet set = empty_set(width, height);
  std::set<std::pair<int64_t, int64_t>> used;
  int64_t next = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    for (;; ++next) {
      const int64_t sx = next % width, sy = next / width, tx = sx + c.dx, ty = sy + c.dy;
      REQUIRE(sy < height);
      if (tx < 0 || ty < 0 || tx >= width || ty >= height) continue;
      if (used.count({sx, sy}) || used.count({tx, ty})) continue;
      used.insert({sx, sy});
      used.insert({tx, ty});
      if (c.dx == 0 && c.dy == 0)
        place(set, uint32_t(sx), uint32_t(sy), {send(0, 0, c.bytes, 0, 0, c.relays), wait(1), mark(uint32_t(i))});
      else {
        place(set, uint32_t(sx), uint32_t(sy), {send(c.dx, c.dy, c.bytes, 0, 0, c.relays)});
        place(set, uint32_t(tx), uint32_t(ty), {wait(1), mark(uint32_t(i))});
      }
      break;
    }
  }
  set.marks = uint32_t(cases.size());
  sim::EngineOptions options;
  options.contention = contention;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), options);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO("dx " << c.dx << " dy " << c.dy << " bytes " << c.bytes << " relays " << c.relays);
    const uint64_t expected = oracles::point_to_point_cycles(hw.fabric, c.dx, c.dy, c.relays, c.bytes);
    CHECK(result.marks[i][0].cycle == expected);
    // The whole latency is fabric time on the critical path.
    CHECK(result.marks[i][0].path[size_t(Category::Fabric)] == expected);
  }
}

std::vector<Case> many_cases() {
  std::vector<Case> cases;
  const int32_t offsets[][2] = {{1, 0},  {-1, 0},   {0, 1},     {0, -1},  {5, 0}, {0, -9},  {3, 4},
                                {-7, 2}, {12, -11}, {-20, -30}, {40, 33}, {0, 0}, {-60, 1}, {1, 70}};
  const uint32_t sizes[] = {1, 4, 5, 64, 1000, 4096};
  for (const auto& offset : offsets)
    for (const uint32_t bytes : sizes) cases.push_back({offset[0], offset[1], bytes, 0});
  cases.push_back({6, 6, 64, 2});  // relays add their cost once each
  return cases;
}

}  // namespace

TEST_CASE("point-to-point messages equal the closed form at many distances and sizes", "[engine][p2p]") {
  // Spot check of the closed form itself from the wse3 figures: ramp 2 + 7 hops
  // + 1 turn + ceil(64 / 4) + ramp 2 = 28 cycles.
  REQUIRE(oracles::point_to_point_cycles(wse3_like().fabric, 3, -4, 0, 64) == 28);
  run_cases(many_cases(), false);
}

TEST_CASE("with contention on, a message alone on the fabric takes the closed-form time", "[engine][p2p]") {
  // Flows far apart share no link or ramp: the contention model reduces to the closed form.
  run_cases({{3, 4, 64, 0}, {-5, 7, 100, 0}, {0, -2, 4, 1}}, true);
}
