// mapping.moe_combine: tree. The expert blocks' combining tree must take
// every expert block in once, and for every routing the blocks that stream
// must be exactly those that have something to add or to pass on, each
// awaited by its parent, so that the layer root takes in one stream. The
// programs' guards are run here for every routing of tiny-moe's 8 experts.
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

// What a block root's combining tasks do for one routing: the guards taken
// as the engine takes them (sim/engine/band.cpp).
struct Ran {
  uint32_t waits = 0, sends = 0;
  uint64_t add_flops = 0;
};
Ran run_combine(const std::vector<Task>& tasks, const std::set<uint32_t>& routed, uint32_t n_routed) {
  auto any = [&](const Task& task) {
    for (uint32_t e = task.expert; e < task.expert + task.experts; ++e)
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
    if (task.op == TaskOp::Send) {
      REQUIRE(task.stream);
      ++ran.sends;
      ran.add_flops += task.work.flops;
    }
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
      for (uint32_t b = 1; b < blocks; ++b) ran[b] = run_combine(region.blocks[b].root_combine, routed, n_routed);
      uint64_t adds = 0;
      for (uint32_t b = blocks; b-- > 1;) {
        const int32_t expert = region.blocks[b].expert;
        const bool own = expert < 0 || routed.count(uint32_t(expert));
        uint32_t streaming_children = 0;
        for (uint32_t child : region.blocks[b].combine_children) streaming_children += ran[child].sends;
        CHECK(ran[b].waits == streaming_children);
        CHECK(ran[b].sends == ((own || streaming_children > 0) ? 1u : 0u));
        // A block adds its own result (one add per element) only when it has one.
        CHECK(ran[b].add_flops == (own ? uint64_t(m.d_model) : 0));
        adds += ran[b].add_flops;
      }
      CHECK(adds == uint64_t(m.d_model) * (routed.size() + m.moe.n_shared_experts));
      if (!routed.empty() || m.moe.n_shared_experts > 0) CHECK(ran[1].sends == 1);
    }
  }
  CHECK(regions > 0);
}

}  // namespace

TEST_CASE("the MoE combining tree streams exactly the experts of each routing to the layer root", "[mapping][moe]") {
  SECTION("routed experts only") { check_tree(moe_plan({"mapping.moe_combine=tree"})); }
  SECTION("a shared expert") { check_tree(moe_plan({"mapping.moe_combine=tree", "model.moe.n_shared_experts=1"})); }
  SECTION("the root dataflow") { check_tree(moe_plan({"mapping.dataflow=root", "mapping.moe_combine=tree"})); }
}

TEST_CASE("mapping.moe_combine follows the dataflow unless set, and root sends every result to the layer root",
          "[mapping][moe]") {
  CHECK(moe_plan({}).options.moe_combine == mapping::MoeCombine::Tree);
  CHECK(moe_plan({"mapping.dataflow=root"}).options.moe_combine == mapping::MoeCombine::Root);
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
