// Compute tasks: a GEMV block, work that grows with the context, expert skips.
#include <algorithm>

#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "tests/oracles/gemv.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Context 100 + 10 n in iteration n; expert 3 of MoE layer 0 is routed in odd iterations.
class GrowingInputs : public IterationInputs {
 public:
  uint64_t context(uint64_t iteration) const override { return 100 + 10 * iteration; }
  bool expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t expert) const override {
    return moe_layer == 0 && expert == 3 && iteration % 2 == 1;
  }
};

}  // namespace

TEST_CASE("a GEMV block, per-position work and expert skips take their cost-function cycles", "[engine][compute]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  set.iterations = 4;
  set.marks = 3;

  // Tile (0, 0): one 64 x 48 FP16 GEMV block per iteration.
  const uint64_t rows = 64, cols = 48;
  const Task gemv = compute(oracles::gemv_block_work(rows, cols, Dtype::FP16, Dtype::FP16));
  place(set, 0, 0, {gemv, mark(0)});

  // Tile (1, 0): attention over its KV share, positions p with p % 4 == 1.
  const Task attention = ComputeTask().work_per_position({64, 256, 0}).kv_stride(4).kv_offset(1);
  place(set, 1, 0, {attention, mark(1)});

  // Tile (2, 0): an expert's compute, skipped unless routed.
  const Task skip = SkipUnlessExpertTask().tasks(1).moe_layer(0).expert(3);
  place(set, 2, 0, {skip, compute({1600, 0, 0}), mark(2)});

  sim::EngineOptions options;
  options.contention = false;
  const sim::EngineResult result = sim::run_programs(hw, set, GrowingInputs(), options);

  // GEMV: 6144 flops at 16/cycle = 384; reads 6144 + 96 B at 16 B/cycle = 390; + 8 overhead.
  const uint64_t gemv_cycles = oracles::gemv_block_cycles(hw.tile, rows, cols, Dtype::FP16, Dtype::FP16);
  REQUIRE(gemv_cycles == 398);
  uint64_t attention_total = 0, expert_total = 0;
  for (uint64_t n = 0; n < 4; ++n) {
    INFO("iteration " << n);
    CHECK(result.marks[0][n].cycle == gemv_cycles * (n + 1));
    // Positions 1, 5, 9, ... below the context: (context - 1 + 3) / 4 of them; 16 B read each.
    const uint64_t positions = (100 + 10 * n + 2) / 4;
    attention_total += 8 + positions * 16;
    CHECK(result.marks[1][n].cycle == attention_total);
    // Routed in odd iterations: 1600 flops / 16 per cycle + 8.
    expert_total += n % 2 == 1 ? 108 : 0;
    CHECK(result.marks[2][n].cycle == expert_total);
  }
  CHECK(result.marks[0][3].path[size_t(Category::Compute)] == 4 * gemv_cycles);
  CHECK(result.end_cycle == std::max({4 * gemv_cycles, attention_total, expert_total}));
}

TEST_CASE("SkipIfExpert and a range of experts skip by the iteration's routing", "[engine][compute]") {
  const HardwareSpec hw = wse3_like(8, 8);
  ProgramSet set = empty_set(8, 8);
  set.iterations = 4;
  set.marks = 5;
  // Expert 3 is routed in odd iterations only (GrowingInputs).
  const Task unless_range = SkipUnlessExpertTask().tasks(1).moe_layer(0).expert(2).experts(2);  // experts 2 and 3
  const Task unless_other = SkipUnlessExpertTask().tasks(1).moe_layer(0).expert(4).experts(4);  // 4..7: never
  const Task if_routed = SkipIfExpertTask().tasks(1).moe_layer(0).expert(3);
  place(set, 0, 0, {unless_range, compute({1600, 0, 0}), mark(0)});
  place(set, 1, 0, {unless_other, compute({1600, 0, 0}), mark(1)});
  place(set, 2, 0, {if_routed, compute({1600, 0, 0}), mark(2)});
  // The same two asked from the tile's own expert (1) on: 1 + 2 = 3.
  set.tile_param.assign(set.tiles(), 0);
  set.tile_param[3] = set.tile_param[4] = 1;
  place(set, 3, 0, {SkipUnlessExpertTask().tasks(1).moe_layer(0).own_expert(2), compute({1600, 0, 0}), mark(3)});
  place(set, 4, 0, {SkipIfExpertTask().tasks(1).moe_layer(0).own_expert(2), compute({1600, 0, 0}), mark(4)});

  sim::EngineOptions options;
  options.contention = false;
  const sim::EngineResult result = sim::run_programs(hw, set, GrowingInputs(), options);
  uint64_t range_total = 0, if_total = 0;
  for (uint64_t n = 0; n < 4; ++n) {
    INFO("iteration " << n);
    range_total += n % 2 == 1 ? 108 : 0;  // 1600 flops / 16 per cycle + 8
    if_total += n % 2 == 0 ? 108 : 0;
    CHECK(result.marks[0][n].cycle == range_total);
    CHECK(result.marks[1][n].cycle == 0);
    CHECK(result.marks[2][n].cycle == if_total);
    CHECK(result.marks[3][n].cycle == range_total);
    CHECK(result.marks[4][n].cycle == if_total);
  }
}
