// mapping.attention: grid lays attention out as WaferLLM's decode kernel does:
// within a KV-head group of columns, column j holds its share of the head
// dimensions and row i the positions p with p mod rows == i. The engine and
// the closed form agree on its timing (tests/backend); this holds where the
// cache lives and what the fixed score buffers cost.
#include "mapping/grid_attention.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "models/tile_program.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/decode_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

Decoded decode(const std::string& attention, std::vector<std::string> overrides) {
  overrides.push_back("mapping.attention=" + attention);
  return decode_text(zoo_experiment("tiny-dense", "tiny", 16, 4), overrides);
}

const mapping::Step& attention_of(const mapping::Region& region) {
  const mapping::Step* found = nullptr;
  for (const auto& step : region.blocks[0].steps)
    if (std::string(step->label()) == "attention") found = step.get();
  INFO(region.name);
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("grid attention: row i holds positions i, i + rows, ... over its column's head dimensions",
          "[mapping][grid]") {
  const Decoded grid = decode("grid", {}), groups = decode("groups", {"mapping.kv_head_copies=1"});
  const Decoded copied = decode("groups", {"mapping.kv_head_copies=2"});
  const mapping::Region& layer = grid.plan.regions[1];
  const mapping::Step& step = attention_of(layer);
  const mapping::BlockGeometry& g = layer.blocks[0].geo;
  REQUIRE(step.has_kv_offset());
  for (uint64_t context : {1ull, 100ull, 1000ull}) {
    INFO("context " << context << " on " << g.rows << " x " << g.cols << " tiles");
    uint64_t held = 0;
    for (uint32_t i = 0; i < g.rows; ++i) {
      for (uint32_t j = 0; j < g.cols; ++j) {
        CHECK(step.kv_offset(i, j) == i);
        held += step.kv_bytes(i, j, context);
        // Down a column, a tile's bytes follow the positions its row holds.
        CHECK(step.kv_bytes(i, j, context) * positions_held(context, g.rows, 0) ==
              step.kv_bytes(0, j, context) * positions_held(context, g.rows, i));
      }
    }
    // Each group's dimensions are cut over its columns: nothing is held twice or left out.
    CHECK(held == step.total_kv_bytes(context));
    CHECK(step.total_kv_bytes(context) == attention_of(groups.plan.regions[1]).total_kv_bytes(context));
    // Two copies of each KV head keep every position twice.
    CHECK(attention_of(copied.plan.regions[1]).total_kv_bytes(context) == 2 * step.total_kv_bytes(context));
  }
}

// The groups layout changes a little too (tiles past the largest context keep
// no attention buffers), so grid's growth is measured against it.
TEST_CASE("grid attention sizes its score messages for the workload's largest context", "[mapping][grid]") {
  const auto attention_cycles = [](const Decoded& d) {
    const Experiment experiment = load_experiment_text(zoo_experiment("tiny-dense", "tiny", 16, 4), "grid.yaml", {});
    const workloads::DecodeInputs inputs(experiment.model, experiment.workload);
    for (const auto& [label, cycles] : d.plan.regions[1].step_cycles(inputs, 0))
      if (label == "attention") return int64_t(cycles);
    return int64_t(0);
  };
  // The same first token; only the largest context the workload reaches differs.
  const auto growth = [&](const char* attention) {
    const int64_t short_run = attention_cycles(decode(attention, {"workload.decode_tokens=4"}));
    const int64_t long_run = attention_cycles(decode(attention, {"workload.decode_tokens=2000"}));
    INFO(attention << ": " << short_run << " against " << long_run << " cycles");
    REQUIRE(short_run > 0);
    return long_run - short_run;
  };
  const int64_t grid = growth("grid"), groups = growth("groups");
  INFO("grid grows by " << grid << " cycles, groups by " << groups);
  // 2,016 positions on 8 rows: 252 scores per row per query head instead of 3, summed along the row and returned.
  CHECK(grid > groups + 100);
}

// mapping.prefill_attention: grid under decode's groups: the prefill's grid
// keeps the prompt's entries for its own attention, and its KV move fills
// decode's cache in decode's shares, copies included: a tile holds both.
TEST_CASE("a grid prefill under decode's groups holds the prompt's grid entries beside decode's cache",
          "[mapping][grid]") {
  for (const char* copies : {"mapping.kv_head_copies=1", "mapping.kv_head_copies=2"}) {
    INFO(copies);
    const Decoded decoded = decode("groups", {copies, "mapping.prefill_attention=grid", "workload.prefill=true"});
    const mapping::Plan prefill = mapping::compile_prefill_plan(decoded.plan);
    const mapping::Step& moving = attention_of(prefill.regions[1]);
    const mapping::Step& decoding = attention_of(decoded.plan.regions[1]);
    const auto* grid = dynamic_cast<const mapping::GridAttentionStep*>(&moving);
    REQUIRE(grid);
    REQUIRE(grid->kv_move());
    const mapping::BlockGeometry& g = prefill.regions[1].blocks[0].geo;
    const uint64_t prompt = 16, entry = dtype_bytes(Dtype::BF16, 2 * 64);  // tiny-dense: head_dim 64, bf16 cache
    for (uint64_t context : {20ull, 300ull}) {
      INFO("context " << context);
      uint64_t held = 0;
      for (uint32_t i = 0; i < g.rows; ++i)
        for (uint32_t j = 0; j < g.cols; ++j) {
          // Decode's share of the tile, as decode's own attention step holds it, and the grid's of the prompt's
          // positions on its row.
          const uint64_t tile = moving.kv_bytes(i, j, context), share = decoding.kv_bytes(i, j, context);
          CHECK(tile >= share);
          CHECK((tile > share) == (positions_held(prompt, g.rows, i) > 0));
          held += tile;
        }
      CHECK(held == moving.total_kv_bytes(context));
      CHECK(moving.total_kv_bytes(context) == decoding.total_kv_bytes(context) + 2 * prompt * entry);
    }
    // The largest context a tile's free bytes hold is the last at which both fit.
    for (uint32_t i = 0; i < g.rows; ++i)
      for (uint32_t j = 0; j < g.cols; ++j)
        for (uint64_t free_bytes : {uint64_t(0), uint64_t(5000), uint64_t(40000)}) {
          INFO("tile (" << i << ", " << j << "), " << free_bytes << " bytes free");
          const uint64_t context = moving.max_context(i, j, free_bytes);
          REQUIRE(context != UINT64_MAX);
          if (moving.kv_bytes(i, j, 0) > free_bytes) {
            CHECK(context == 0);
            continue;
          }
          CHECK(moving.kv_bytes(i, j, context) <= free_bytes);
          CHECK(moving.kv_bytes(i, j, context + 1) > free_bytes);
        }
  }
}
