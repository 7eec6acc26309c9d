// A combining chain's top, taken apart per block (CombineChain::tops), equals
// the chain walked block by block, for every set of routed blocks, on
// random chains whose small times tie often; and the walk itself follows
// the streams' rules on a chain timed by hand.
#include "mapping/combine_chain.h"

#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

using namespace wafersim;
using mapping::ColumnCombine;
using mapping::CombineChain;
using mapping::Timed;

namespace {

Timed timed(uint64_t cycle, Category category) {
  Timed t;
  t.cycle = cycle;
  t.path[size_t(category)] = cycle;
  return t;
}

// A chain of `blocks` blocks over `columns` columns, times drawn from a few
// small values; `shared`: the expert of block `shared` is a shared one.
std::vector<ColumnCombine::Node> random_chain(std::mt19937_64& rng, size_t blocks, size_t columns, int shared) {
  auto small = [&](uint64_t high) { return std::uniform_int_distribution<uint64_t>(0, high)(rng); };
  std::vector<ColumnCombine::Node> nodes(blocks);
  for (size_t p = 0; p < blocks; ++p) {
    ColumnCombine::Node& node = nodes[p];
    node.routed_index = int(p) == shared ? -1 : int32_t(p);
    node.child = p > 0 ? int32_t(p - 1) : -1;
    node.top = p + 1 == blocks;
    for (size_t j = 0; j < columns; ++j) {
      // Paths of different categories, so that a tie between starts shows in the path.
      const uint64_t arrival = small(6);
      node.arrival.push_back(timed(arrival, Category::Fabric));
      node.ready.push_back(timed(arrival + 1 + small(4), Category::Compute));
      if (node.top) {
        node.finish_own_cycles.push_back(small(5));
        node.finish_passing_cycles.push_back(small(3));
      } else {
        node.latency.push_back(1 + small(3));
        node.serialization.push_back(small(5));
        node.add_cycles.push_back(small(5));
      }
    }
  }
  return nodes;
}

std::vector<const ColumnCombine::Node*> bottom_up(const std::vector<ColumnCombine::Node>& nodes) {
  std::vector<const ColumnCombine::Node*> out;
  for (const ColumnCombine::Node& node : nodes) out.push_back(&node);
  return out;
}

}  // namespace

TEST_CASE("a combining chain's top per block equals its walk for every routed set", "[moe][closed form]") {
  std::mt19937_64 rng(20261206);
  size_t compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t blocks = 1 + trial % 9, columns = 1 + trial % 4;
    const int shared = trial % 5 == 0 ? int(rng() % blocks) : -1;
    const std::vector<ColumnCombine::Node> nodes = random_chain(rng, blocks, columns, shared);
    const CombineChain chain(bottom_up(nodes));
    for (uint32_t set = 0; set < (1u << blocks); ++set) {
      std::vector<uint32_t> routed;
      for (uint32_t p = 0; p < blocks; ++p)
        if (set >> p & 1) routed.push_back(p);
      const std::vector<Timed> walked = chain.walked_tops(routed), taken_apart = chain.tops(routed);
      REQUIRE(walked.size() == columns);
      for (size_t j = 0; j < columns; ++j) {
        INFO("trial " << trial << ", routed set " << set << ", column " << j);
        REQUIRE(taken_apart[j].cycle == walked[j].cycle);
        REQUIRE(taken_apart[j].path == walked[j].path);
      }
      ++compared;
    }
  }
  CHECK(compared > 10000);
}

TEST_CASE("a combining chain's kept tops (none or one block routed) stay its walk's, asked in any order",
          "[moe][closed form]") {
  std::mt19937_64 rng(20261208);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t blocks = 2 + trial % 7, columns = 1 + trial % 3;
    const int shared = trial % 4 == 0 ? int(rng() % blocks) : -1;
    std::vector<ColumnCombine::Node> nodes = random_chain(rng, blocks, columns, shared);
    // Every third chain's bottom block has a routed start that ties its unrouted one: it is walked, not taken apart.
    if (trial % 3 == 0) nodes[0].ready[0] = nodes[0].arrival[0];
    const CombineChain chain(bottom_up(nodes));
    // Each set of at most one block, asked three times between sets of two
    // through one scratch vector, from the top block down; a kept answer is
    // checked again after the next set has been written into the scratch.
    std::vector<Timed> scratch;
    for (int round = 0; round < 3; ++round)
      for (uint32_t p = uint32_t(blocks) + 1; p-- > 0;) {
        const std::vector<uint32_t> routed = p == blocks ? std::vector<uint32_t>{} : std::vector<uint32_t>{p};
        const std::vector<uint32_t> pair{0, uint32_t(blocks - 1)};
        INFO("trial " << trial << ", round " << round << ", block " << p);
        CHECK(chain.tops(pair, scratch) == chain.walked_tops(pair));
        const std::vector<Timed>& kept = chain.tops(routed, scratch);
        CHECK(kept == chain.walked_tops(routed));
        CHECK(chain.tops(pair, scratch) == chain.walked_tops(pair));
        CHECK(kept == chain.walked_tops(routed));
      }
  }
}

TEST_CASE("a combining chain walked by hand", "[moe][closed form]") {
  // Bottom block (routed), then the top (not routed), one column.
  std::vector<ColumnCombine::Node> nodes(2);
  nodes[0].routed_index = 0;
  nodes[0].arrival = {timed(2, Category::Fabric)};
  nodes[0].ready = {timed(10, Category::Compute)};
  nodes[0].latency = {3};
  nodes[0].serialization = {7};
  nodes[0].add_cycles = {4};
  nodes[1].routed_index = 1;
  nodes[1].top = true;
  nodes[1].arrival = {timed(5, Category::Fabric)};
  nodes[1].ready = {timed(6, Category::Compute)};
  nodes[1].finish_own_cycles = {9};
  nodes[1].finish_passing_cycles = {2};
  const CombineChain chain(bottom_up(nodes));
  // Nothing routed: the top writes out nothing but its own pass, from its arrival.
  const Timed idle = chain.walked_tops({})[0];
  CHECK(idle.cycle == 5 + 2);
  CHECK(idle.path[size_t(Category::Fabric)] == 5);
  CHECK(idle.path[size_t(Category::Reduce)] == 2);
  // The bottom routed: its result's head reaches the top at 10 + 3 = 13, its
  // tail leaves at 10 + max(7, 4) = 17 and is in at 17 + 3 + 1 (the add) = 21,
  // later than the head plus the top's busy time, max(2, 7) = 20.
  const Timed bottom = chain.walked_tops({0})[0];
  CHECK(bottom.cycle == 21);
  CHECK(bottom.path[size_t(Category::Compute)] == 10);
  CHECK(bottom.path[size_t(Category::Reduce)] == 11);
  CHECK(chain.tops({0})[0] == bottom);
  // Both routed: the top's own result (6) starts first, but the head from
  // below is later (13), and 13 + max(9, 7) = 22 beats the tail at 21.
  const Timed both = chain.walked_tops({0, 1})[0];
  CHECK(both.cycle == 22);
  CHECK(both.path[size_t(Category::Compute)] == 10);
  CHECK(chain.tops({0, 1})[0] == both);
}
