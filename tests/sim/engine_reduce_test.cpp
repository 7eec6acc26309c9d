// Chain and tree reductions built as tile programs exactly as tests/oracles/reduce.h
// defines them: the engine's completion cycle equals the closed form.
#include <catch2/catch.hpp>

#include "models/task_builders.h"
#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/oracles/reduce.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

oracles::ReduceParams reduce_params(uint32_t tiles) {
  oracles::ReduceParams reduce;
  reduce.tiles = tiles;
  reduce.bytes = 512;                 // 256 FP16 partial sums
  reduce.combine = {256, 1024, 512};  // add two 256-element vectors
  reduce.dtype = Dtype::FP16;
  return reduce;
}

// The critical-path account of a mark adds up to its cycle: every cycle of the
// path is either compute on some tile or transit of some message.
uint64_t checked_cycle(const sim::EngineResult& result) {
  const sim::MarkRecord& record = result.marks[0][0];
  uint64_t sum = 0;
  for (const uint64_t cycles : record.path) sum += cycles;
  CHECK(sum == record.cycle);
  CHECK(record.path[size_t(Category::Reduce)] > 0);
  CHECK(record.path[size_t(Category::Fabric)] > 0);
  return record.cycle;
}

Task combine(const oracles::ReduceParams& reduce, uint32_t vectors) {
  return compute(reduce.combine * vectors, reduce.dtype, Category::Reduce);
}

// Along row 0: tile n-1 sends west, each tile combines and passes on, tile 0 marks.
uint64_t simulate_chain(const HardwareSpec& hw, const oracles::ReduceParams& reduce) {
  ProgramSet set = empty_set(hw.grid_width, hw.grid_height);
  const uint32_t n = reduce.tiles;
  place(set, n - 1, 0, {send(-1, 0, uint32_t(reduce.bytes))});
  for (uint32_t i = 1; i + 1 < n; ++i)
    place(set, i, 0, {wait(1), combine(reduce, 1), send(-1, 0, uint32_t(reduce.bytes))});
  place(set, 0, 0, {wait(1), combine(reduce, 1), mark(0)});
  set.marks = 1;
  sim::EngineOptions options;
  options.contention = false;
  return checked_cycle(sim::run_programs(hw, set, sim::SteadyInputs(), options));
}

// The tree of reduce.h: at each level a receiver waits for its members (tag =
// level) and combines them in one task; a sender sends to its receiver and is done.
uint64_t simulate_tree(const HardwareSpec& hw, const oracles::ReduceParams& reduce, uint32_t fan_in) {
  ProgramSet set = empty_set(hw.grid_width, hw.grid_height);
  const uint32_t n = reduce.tiles, levels = oracles::tree_levels(n, fan_in);
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<Task> tasks;
    for (uint32_t level = 0; level < levels; ++level) {
      const uint32_t count = oracles::tree_receive_count(i, level, n, fan_in);
      if (count > 0) {
        tasks.push_back(wait(count, uint16_t(level)));
        tasks.push_back(combine(reduce, count));
      }
      const uint32_t hops = oracles::tree_send_hops(i, level, fan_in);
      if (hops > 0) {
        tasks.push_back(send(-int32_t(hops), 0, uint32_t(reduce.bytes), uint16_t(level)));
        break;
      }
    }
    if (i == 0) tasks.push_back(mark(0));
    place(set, i, 0, tasks);
  }
  set.marks = 1;
  sim::EngineOptions options;
  options.contention = false;
  return checked_cycle(sim::run_programs(hw, set, sim::SteadyInputs(), options));
}

// The same chain streamed (Task::stream): each tile adds the wavelets as they pass.
uint64_t simulate_streamed_chain(const HardwareSpec& hw, const oracles::ReduceParams& reduce, bool contention) {
  ProgramSet set = empty_set(hw.grid_width, hw.grid_height);
  const uint32_t n = reduce.tiles, bytes = uint32_t(reduce.bytes);
  place(set, n - 1, 0, {SendTask().dx(-1).bytes(bytes).category(Category::Reduce).streamed(Work{}, Dtype::FP32)});
  const Task receive = WaitTask().messages(1).heads_only(bytes);
  for (uint32_t i = 1; i + 1 < n; ++i)
    place(set, i, 0,
          {receive, SendTask().dx(-1).bytes(bytes).category(Category::Reduce).streamed(reduce.combine, Dtype::FP32)});
  place(set, 0, 0,
        {receive, ComputeTask().work(reduce.combine).dtype(Dtype::FP32).category(Category::Reduce).after_streams(),
         mark(0)});
  set.marks = 1;
  sim::EngineOptions options;
  options.contention = contention;
  const sim::EngineResult result = sim::run_programs(hw, set, sim::SteadyInputs(), options);
  const sim::MarkRecord& record = result.marks[0][0];
  uint64_t sum = 0;
  for (const uint64_t cycles : record.path) sum += cycles;
  CHECK(sum == record.cycle);
  return record.cycle;
}

}  // namespace

TEST_CASE("a streamed chain reduce pays its serialisation once", "[engine][reduce][stream]") {
  const HardwareSpec hw = wse3_like(64, 4);
  const oracles::ReduceParams reduce = reduce_params(50);
  // By hand: the 512-byte body takes 128 cycles and every tile's fp32 adds
  // (8 + 64 cycles) keep up with it; each of the 49 links adds its head
  // latency (2 + 1 + 2) and one add: 128 + 49 * 6 = 422, against 10,045
  // store-and-forward.
  CHECK(simulate_streamed_chain(hw, reduce, false) == 422);
}

TEST_CASE("a streamed chain alone on its links does not wait under contention", "[engine][reduce][stream]") {
  const HardwareSpec hw = wse3_like(64, 4);
  CHECK(simulate_streamed_chain(hw, reduce_params(50), true) == 422);
}

TEST_CASE("a chain reduce equals (n-1) (message + combine)", "[engine][reduce]") {
  const HardwareSpec hw = wse3_like(64, 4);
  const oracles::ReduceParams reduce = reduce_params(50);
  // By hand: a 1-hop 512-byte message is 2 + 1 + 128 + 2 = 133 cycles; the
  // combine reads 1024 B at 16 B/cycle: 8 + 64 = 72 cycles; 49 * 205 = 10045.
  REQUIRE(oracles::chain_reduce_cycles(hw, reduce) == 10045);
  CHECK(simulate_chain(hw, reduce) == 10045);
}

TEST_CASE("a fan-in 2 tree reduce equals its closed form", "[engine][reduce]") {
  const HardwareSpec hw = wse3_like(64, 4);
  const oracles::ReduceParams reduce = reduce_params(32);
  const uint64_t closed = oracles::full_tree_reduce_cycles(hw, reduce, 2);
  REQUIRE(closed == oracles::tree_reduce_cycles(hw, reduce, 2));
  CHECK(simulate_tree(hw, reduce, 2) == closed);
}

TEST_CASE("a fan-in 4 tree reduce equals its closed form", "[engine][reduce]") {
  const HardwareSpec hw = wse3_like(64, 4);
  const oracles::ReduceParams reduce = reduce_params(64);
  const uint64_t closed = oracles::full_tree_reduce_cycles(hw, reduce, 4);
  REQUIRE(closed == oracles::tree_reduce_cycles(hw, reduce, 4));
  CHECK(simulate_tree(hw, reduce, 4) == closed);
}

TEST_CASE("a fan-in 4 tree over a line that is not a power of 4 equals the level-by-level form", "[engine][reduce]") {
  const HardwareSpec hw = wse3_like(64, 4);
  const oracles::ReduceParams reduce = reduce_params(23);
  CHECK(simulate_tree(hw, reduce, 4) == oracles::tree_reduce_cycles(hw, reduce, 4));
}
