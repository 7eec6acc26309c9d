// mapping.moe_combine: tree and columns. The expert blocks' combining tree
// (or column chains) must take every expert block in once, and for every
// routing the blocks that stream must be exactly those that have something to
// add or to pass on, each awaited by its parent, so that the layer root takes
// in one stream (or each root-column tile its fixed pieces). The programs'
// guards are run here for every routing of tiny-moe's 8 experts.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

mapping::Plan moe_plan(std::vector<std::string> overrides) {
  return compile(load_experiment_text(zoo_experiment("tiny-moe", "tiny"), "moe.yaml", overrides));
}

// What a tile's combining tasks do for one routing (a tree's block root, a
// column chain's root-row tile): the guards taken as the engine takes them
// (sim/engine/band.cpp).
struct Ran {
  uint32_t waits = 0, streams = 0, computes = 0;
  uint64_t add_flops = 0;
  std::vector<const Task*> pieces;  // a chain top's sends to the root column
};
Ran run_combine(const std::vector<Task>& tasks, const std::set<uint32_t>& routed, uint32_t n_routed, int32_t own) {
  auto any = [&](const Task& task) {
    const uint32_t first = task.expert == Task::kTileParam ? uint32_t(own) + task.expert_offset : task.expert;
    for (uint32_t e = first; e < first + task.experts; ++e)
      if (e >= n_routed || routed.count(e)) return true;
    return false;
  };
  Ran ran;
  for (size_t pc = 0; pc < tasks.size(); ++pc) {
    const Task& task = tasks[pc];
    if (task.op == TaskOp::SkipUnlessExpert && !any(task)) pc += task.count;
    if (task.op == TaskOp::SkipIfExpert && any(task)) pc += task.count;
    if (task.op == TaskOp::Wait) {
      REQUIRE(task.stream);
      ++ran.waits;
    }
    if (task.op == TaskOp::Compute) {
      REQUIRE(task.stream);
      ++ran.computes;
      ran.add_flops += task.work.flops;
    }
    if (task.op == TaskOp::Send && task.stream) {
      ++ran.streams;
      ran.add_flops += task.work.flops;
    }
    if (task.op == TaskOp::Send && !task.stream) ran.pieces.push_back(&task);
  }
  return ran;
}

void check_tree(const mapping::Plan& plan) {
  const workloads::ModelSpec& m = plan.model;
  const uint32_t n_routed = m.moe.n_experts;
  size_t regions = 0;
  for (const mapping::Region& region : plan.regions) {
    if (region.kind != mapping::RegionKind::Moe) continue;
    ++regions;
    INFO(region.name);
    const size_t blocks = region.blocks.size();
    // Every expert block but the first is one block's child, after it; the first streams to the layer root.
    std::map<uint32_t, uint32_t> parent_of;
    bool two_children = false;
    for (uint32_t b = 1; b < blocks; ++b) {
      const mapping::Block& block = region.blocks[b];
      two_children = two_children || block.combine_children.size() == 2;
      for (uint32_t child : block.combine_children) {
        CHECK(child > b);
        CHECK(parent_of.count(child) == 0);
        parent_of[child] = b;
      }
    }
    CHECK(parent_of.size() == blocks - 2);
    CHECK(parent_of.count(1) == 0);
    CHECK(two_children);  // the experts take more than one row: the column chain is exercised

    // The layer root waits for one stream of the fp32 sum, on the experts step's first tag.
    uint16_t tag = 0;
    for (const auto& step : region.blocks[0].steps)
      if (std::string(step->label()) == "experts") tag = step->env().tag;
    REQUIRE(tag != 0);
    uint32_t root_waits = 0;
    for (const Task& task : region.blocks[0].program(0, 0))
      if (task.op == TaskOp::Wait && task.tag == tag) {
        ++root_waits;
        CHECK(task.stream);
        CHECK(task.count == 1);
        CHECK(task.bytes == 4 * m.d_model);
      }
    CHECK(root_waits == 1);

    // Every routing of the layer's experts (tiny-moe: 8, so 256 of them; top_k not assumed).
    REQUIRE(n_routed <= 10);
    for (uint32_t mask = 0; mask < (1u << n_routed); ++mask) {
      std::set<uint32_t> routed;
      for (uint32_t e = 0; e < n_routed; ++e)
        if (mask >> e & 1) routed.insert(e);
      INFO("routing mask " << mask);
      std::vector<Ran> ran(blocks);
      for (uint32_t b = 1; b < blocks; ++b)
        ran[b] = run_combine(region.blocks[b].root_combine, routed, n_routed, region.blocks[b].expert);
      uint64_t adds = 0;
      for (uint32_t b = blocks; b-- > 1;) {
        const int32_t expert = region.blocks[b].expert;
        const bool own = expert < 0 || routed.count(uint32_t(expert));
        uint32_t streaming_children = 0;
        for (uint32_t child : region.blocks[b].combine_children) streaming_children += ran[child].streams;
        CHECK(ran[b].waits == streaming_children);
        CHECK(ran[b].streams == ((own || streaming_children > 0) ? 1u : 0u));
        // A block adds its own result (one add per element) only when it has one.
        CHECK(ran[b].add_flops == (own ? uint64_t(m.d_model) : 0));
        adds += ran[b].add_flops;
      }
      CHECK(adds == uint64_t(m.d_model) * (routed.size() + m.moe.n_shared_experts));
      if (!routed.empty() || m.moe.n_shared_experts > 0) CHECK(ran[1].streams == 1);
    }
  }
  CHECK(regions > 0);
}

// mapping.moe_combine: columns. Each place's blocks form one chain; for every
// routing each root-row tile streams exactly when it has something to add or
// pass on, each awaited by the tile above, and every chain's top sends each
// root-column tile the pieces it awaits, whatever the routing.
void check_columns(const mapping::Plan& plan) {
  const workloads::ModelSpec& m = plan.model;
  const uint32_t n_routed = m.moe.n_experts;
  size_t regions = 0;
  for (const mapping::Region& region : plan.regions) {
    if (region.kind != mapping::RegionKind::Moe) continue;
    ++regions;
    INFO(region.name);
    const size_t blocks = region.blocks.size();
    const mapping::BlockGeometry& main = region.blocks[0].geo;
    std::map<uint32_t, uint32_t> parent_of;
    for (uint32_t b = 1; b < blocks; ++b)
      for (uint32_t child : region.blocks[b].combine_children) {
        CHECK(child == b + 1);  // the block below it, the next expert
        CHECK(region.blocks[child].geo.x(0, 0) - region.blocks[b].geo.x(0, 0) +
                  (region.blocks[child].geo.y(0, 0) - region.blocks[b].geo.y(0, 0)) ==
              region.blocks[b].geo.rows);  // straight down, one block's height
        CHECK(region.blocks[child].geo.cols == region.blocks[b].geo.cols);
        parent_of[child] = b;
      }
    const size_t chains = blocks - 1 - parent_of.size();
    CHECK(chains >= 2);
    CHECK(parent_of.size() >= 2);

    // Root-column tile i awaits, on the experts step's first tag, one piece per chain top's column that holds its
    // elements.
    uint16_t tag = 0;
    for (const auto& step : region.blocks[0].steps)
      if (std::string(step->label()) == "experts") tag = step->env().tag;
    REQUIRE(tag != 0);
    std::vector<uint32_t> awaited(main.rows, 0);
    for (uint32_t i = 0; i < main.rows; ++i)
      for (const Task& task : region.blocks[0].program(i, 0))
        if (task.op == TaskOp::Wait && task.tag == tag) awaited[i] += task.count;

    REQUIRE(n_routed <= 10);
    for (uint32_t mask = 0; mask < (1u << n_routed); ++mask) {
      std::set<uint32_t> routed;
      for (uint32_t e = 0; e < n_routed; ++e)
        if (mask >> e & 1) routed.insert(e);
      INFO("routing mask " << mask);
      uint64_t adds = 0;
      std::vector<uint32_t> delivered(main.rows, 0);
      for (uint32_t b = blocks; b-- > 1;) {
        const mapping::Block& block = region.blocks[b];
        const bool own = block.expert < 0 || routed.count(uint32_t(block.expert));
        const bool top = parent_of.count(b) == 0;
        REQUIRE(block.row_combine.size() == block.geo.cols);
        for (uint32_t j = 0; j < block.geo.cols; ++j) {
          INFO("block " << b << ", column " << j);
          const Ran ran = run_combine(block.row_combine[j], routed, n_routed, block.expert);
          uint32_t streaming_children = 0;
          for (uint32_t child : block.combine_children)
            streaming_children +=
                run_combine(region.blocks[child].row_combine[j], routed, n_routed, region.blocks[child].expert).streams;
          CHECK(ran.waits == streaming_children);
          CHECK(ran.add_flops == (own ? block.geo.column_share(m.d_model, j) : 0));
          adds += ran.add_flops;
          if (!top) {
            CHECK(ran.streams == ((own || streaming_children > 0) ? 1u : 0u));
            CHECK(ran.computes == 0);
            CHECK(ran.pieces.empty());
            continue;
          }
          CHECK(ran.streams == 0);
          CHECK(ran.computes == 1);
          for (const Task* piece : ran.pieces) {
            bool found = false;
            for (uint32_t i = 0; i < main.rows; ++i)
              if (int32_t(main.x(i, 0)) - int32_t(block.geo.x(0, j)) == piece->dx &&
                  int32_t(main.y(i, 0)) - int32_t(block.geo.y(0, j)) == piece->dy) {
                ++delivered[i];
                found = true;
              }
            CHECK(found);
          }
        }
      }
      CHECK(adds == uint64_t(m.d_model) * (routed.size() + m.moe.n_shared_experts));
      CHECK(delivered == awaited);
    }
  }
  CHECK(regions > 0);
}

}  // namespace

// mapping.moe_combine: columns. The dispatch: every main-block tile holding a
// piece of a column's input slice sends it to the first expert row on that
// column, which takes them all and the choice, and multicasts both down
// through every expert row; every other expert tile takes that multicast once.
void check_column_dispatch(const mapping::Plan& plan) {
  size_t regions = 0;
  for (const mapping::Region& region : plan.regions) {
    if (region.kind != mapping::RegionKind::Moe) continue;
    ++regions;
    INFO(region.name);
    const mapping::BlockGeometry& main = region.blocks[0].geo;
    uint16_t tag = 0;
    for (const auto& step : region.blocks[0].steps)
      if (std::string(step->label()) == "experts") tag = step->env().tag;
    REQUIRE(tag != 0);
    const uint16_t choice_tag = uint16_t(tag + 2), input_tag = uint16_t(tag + 3);
    // Per region column: the input bytes the main block sends down it.
    std::map<uint32_t, uint64_t> sent_bytes;
    std::map<uint32_t, uint32_t> sent_pieces;
    for (uint32_t i = 0; i < main.rows; ++i)
      for (uint32_t c = 0; c < main.cols; ++c)
        for (const Task& task : region.blocks[0].program(i, c))
          if (task.op == TaskOp::Send && task.tag == input_tag) {
            CHECK(int32_t(main.x(i, c)) + task.dx == int32_t(main.x(main.rows, c)));
            CHECK(int32_t(main.y(i, c)) + task.dy == int32_t(main.y(main.rows, c)));
            sent_bytes[c] += task.bytes;
            ++sent_pieces[c];
          }
    // Region row and column of a tile of a block.
    auto region_row = [&](const mapping::BlockGeometry& g, uint32_t i, uint32_t j) {
      return main.across_is_x ? g.y(i, j) - main.y0 : g.x(i, j) - main.x0;
    };
    auto region_column = [&](const mapping::BlockGeometry& g, uint32_t i, uint32_t j) {
      return main.across_is_x ? g.x(i, j) - main.x0 : g.y(i, j) - main.y0;
    };
    uint32_t tops = 0;
    for (size_t b = 1; b < region.blocks.size(); ++b) {
      const mapping::Block& block = region.blocks[b];
      const mapping::BlockGeometry& g = block.geo;
      const bool top = region_row(g, 0, 0) == main.rows;
      tops += top ? 1 : 0;
      for (uint32_t i = 0; i < g.rows; ++i)
        for (uint32_t j = 0; j < g.cols; ++j) {
          INFO("block " << b << ", tile (" << i << ", " << j << ")");
          uint32_t choices = 0, inputs = 0, forwards = 0;
          for (const Task& task : block.program(i, j)) {
            if (task.op == TaskOp::Wait && task.tag == choice_tag) choices += task.count;
            if (task.op == TaskOp::Wait && task.tag == input_tag) inputs += task.count;
            if (task.op == TaskOp::Multicast && task.tag == input_tag) {
              ++forwards;
              // The slice and the choice (an index and a weight per choice), on down the column.
              CHECK(task.bytes == sent_bytes[region_column(g, i, j)] + 8 * plan.model.moe.top_k);
            }
          }
          if (top && i == 0) {
            CHECK(choices == 1);
            CHECK(inputs == sent_pieces[region_column(g, i, j)]);
            CHECK(forwards == 1);  // the expert rows are taller than one tile here
          } else {
            CHECK(choices == 0);
            CHECK(inputs == 1);
            CHECK(forwards == 0);
          }
        }
    }
    // Each place's columns take the whole input once: the pieces add up to d_model per place.
    uint64_t all = 0;
    for (uint32_t c = 0; c < main.cols; ++c) all += sent_bytes[c];
    CHECK(all == uint64_t(tops) * dtype_bytes(plan.model.activation_dtype, plan.model.d_model));
  }
  CHECK(regions > 0);
}

TEST_CASE("the MoE columns' dispatch sends every expert column its input slice once", "[mapping][moe]") {
  check_column_dispatch(moe_plan({}));
  check_column_dispatch(moe_plan({"model.moe.n_shared_experts=1"}));
}

TEST_CASE("the MoE column chains stream exactly the experts of each routing to the root column", "[mapping][moe]") {
  SECTION("routed experts only") { check_columns(moe_plan({})); }
  SECTION("a shared expert") { check_columns(moe_plan({"model.moe.n_shared_experts=1"})); }
  SECTION("batch 2") { check_columns(moe_plan({"workload.batch=2"})); }
}

TEST_CASE("the MoE combining tree streams exactly the experts of each routing to the layer root", "[mapping][moe]") {
  SECTION("routed experts only") { check_tree(moe_plan({"mapping.moe_combine=tree"})); }
  SECTION("a shared expert") { check_tree(moe_plan({"mapping.moe_combine=tree", "model.moe.n_shared_experts=1"})); }
  SECTION("the root dataflow") { check_tree(moe_plan({"mapping.dataflow=root", "mapping.moe_combine=tree"})); }
}

TEST_CASE("mapping.moe_combine follows the dataflow unless set, and root sends every result to the layer root",
          "[mapping][moe]") {
  CHECK(moe_plan({}).options.moe_combine == mapping::MoeCombine::Columns);
  CHECK(moe_plan({"mapping.dataflow=root"}).options.moe_combine == mapping::MoeCombine::Root);
  CHECK_THROWS_WITH(moe_plan({"mapping.dataflow=root", "mapping.moe_combine=columns"}),
                    Catch::Contains("mapping.moe_combine") && Catch::Contains("needs mapping.dataflow: distributed"));
  const mapping::Plan root = moe_plan({"mapping.moe_combine=root"});
  CHECK(root.options.moe_combine == mapping::MoeCombine::Root);
  for (const mapping::Region& region : root.regions) {
    if (region.kind != mapping::RegionKind::Moe) continue;
    for (size_t b = 1; b < region.blocks.size(); ++b) {
      CHECK(region.blocks[b].root_combine.empty());
      CHECK(region.blocks[b].root_epilogue.size() == 1);  // its result, to the layer root
    }
  }
}
