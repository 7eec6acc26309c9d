// The engine as a SystemC structure, its errors, and messages across iterations.
#include <string>
#include <systemc>

#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {
std::string engine_error(const HardwareSpec& hw, const ProgramSet& set) {
  try {
    sim::run_programs(hw, set, sim::SteadyInputs(), {});
  } catch (const sim::EngineError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("every tile is an object in the SystemC hierarchy under its band", "[engine][structure]") {
  const HardwareSpec hw = wse3_like(6, 4);
  ProgramSet set = empty_set(6, 4);
  place(set, 0, 0, {send(5, 3, 4)});
  place(set, 5, 3, {wait(1)});
  sim::EngineOptions options;
  options.bands = 3;
  sim::run_programs(hw, set, sim::SteadyInputs(), options);

  size_t tiles = 0;
  for (const char* band : {"b0", "b1", "b2"}) {
    sc_core::sc_object* module = sc_core::sc_find_object(band);
    REQUIRE(module != nullptr);
    CHECK(std::string(module->kind()) == "sc_module");
    for (sc_core::sc_object* child : module->get_child_objects())
      if (std::string(child->kind()) == "wafersim_tile") ++tiles;
  }
  CHECK(tiles == 24);
  // Rows are split evenly: band 2 holds rows 2..3.
  sc_core::sc_object* tile = sc_core::sc_find_object("b2.w0x5y3");
  REQUIRE(tile != nullptr);
  CHECK(std::string(tile->kind()) == "wafersim_tile");
}

TEST_CASE("a tile left waiting is reported as a deadlock with what it waits for", "[engine][deadlock]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  place(set, 0, 2, {send(3, 0, 16, 7)});
  place(set, 3, 2, {wait(2, 7)});
  const std::string message = engine_error(hw, set);
  INFO(message);
  CHECK(message.find("deadlock") != std::string::npos);
  CHECK(message.find("tile (x 3, y 2) on wafer 0") != std::string::npos);
  CHECK(message.find("tag 7 of iteration 0") != std::string::npos);
  CHECK(message.find("has 1 of 2 messages") != std::string::npos);
}

TEST_CASE("bad program sets are refused before elaboration, then one simulation runs", "[engine][validation]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet off_grid = empty_set(8, 8);
  place(off_grid, 6, 1, {send(2, 0, 16)});
  CHECK(engine_error(hw, off_grid).find("tile (x 6, y 1) on wafer 0: task 0 sends to (x 8, y 1)") != std::string::npos);

  ProgramSet bad_mark = empty_set(8, 8);
  place(bad_mark, 0, 0, {mark(3)});
  CHECK(engine_error(hw, bad_mark).find("marks slot 3 but the set has 0") != std::string::npos);

  ProgramSet other_grid = empty_set(4, 8);
  CHECK(engine_error(hw, other_grid).find("4x8 grid") != std::string::npos);

  ProgramSet good = empty_set(8, 8);
  place(good, 0, 0, {send(1, 0, 4)});
  place(good, 1, 0, {wait(1)});
  CHECK(engine_error(hw, good).empty());
  CHECK(engine_error(hw, good).find("one simulation per process") != std::string::npos);
}

TEST_CASE("a message to the next iteration closes a loop from the last stage to the first", "[engine][iterations]") {
  const HardwareSpec hw = wse3_like(4, 4);
  ProgramSet set = empty_set(4, 4);
  set.iterations = 3;
  set.marks = 1;
  const Task work = compute({1600, 0, 0});  // 1600 flops / 16 per cycle + 8 = 108 cycles
  const Task feed_back = SendTask().dx(-1).bytes(64).tag(0).iteration_delta(1);
  place(set, 0, 0, {wait(1, 0), work, send(1, 0, 64, 1), mark(0)});
  place(set, 1, 0, {wait(1, 1), work, feed_back});
  set.injections.push_back({0, 0, 0});
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), {});
  // One lap: two computes and two 1-hop messages of 2 + 1 + 16 + 2 = 21 cycles.
  const uint64_t lap = 2 * 108 + 2 * 21;
  for (uint64_t n = 0; n < 3; ++n) CHECK(result.marks[0][n].cycle == n * lap + 108);
  // The last iteration's feedback would feed iteration 3, which does not run: it is dropped.
  CHECK(result.end_cycle == 2 * lap + 108 + 21 + 108);
}
