// Line trees: roles and completion times against trees worked out by hand.
#include "mapping/line_tree.h"

#include <catch2/catch.hpp>

using namespace wafersim;
using namespace wafersim::mapping;

namespace {

// Unit costs: a message takes as many cycles as positions it travels, combining takes 1.
TreeCosts unit_costs() {
  TreeCosts costs;
  costs.message_cycles = [](uint32_t, uint32_t distance, uint64_t) { return uint64_t(distance); };
  costs.payload_bytes = [](uint32_t, uint32_t size) { return uint64_t(size); };
  costs.combine_cycles = [](uint64_t) { return uint64_t(1); };
  return costs;
}

std::vector<Timed> zeros(size_t n) { return std::vector<Timed>(n); }

}  // namespace

TEST_CASE("binary tree over five positions", "[mapping][tree]") {
  // Level 0: 1 -> 0, 3 -> 2; level 1: 2 -> 0; level 2: 4 -> 0.
  CHECK(tree_levels(5, 2) == 3);
  const TreeRole root = tree_role(0, 5, 2);
  CHECK(root.send_level == -1);
  CHECK(root.children_per_level == std::vector<uint32_t>{1, 1, 1});
  const TreeRole two = tree_role(2, 5, 2);
  CHECK(two.children_per_level == std::vector<uint32_t>{1});
  CHECK(two.send_level == 1);
  CHECK(two.parent_distance == 2);
  CHECK(two.subtree_size == 2);
  const TreeRole four = tree_role(4, 5, 2);
  CHECK(four.children_per_level == std::vector<uint32_t>{0, 0});
  CHECK(four.send_level == 2);
  CHECK(four.parent_distance == 4);
  CHECK(four.subtree_size == 1);
  const TreeRole three = tree_role(3, 5, 2);
  CHECK(three.send_level == 0);
  CHECK(three.parent_distance == 1);

  // t0 = max(0, 0+1)+1 = 2, t2 = 2; then t0 = max(2, 2+2)+1 = 5; then max(5, 0+4)+1 = 6.
  CHECK(tree_completion(zeros(5), 2, unit_costs()).cycle == 6);
}

TEST_CASE("fan-in four over six positions", "[mapping][tree]") {
  // Level 0: 1, 2, 3 -> 0 and 5 -> 4; level 1: 4 -> 0.
  CHECK(tree_role(0, 6, 4).children_per_level == std::vector<uint32_t>{3, 1});
  CHECK(tree_role(4, 6, 4).children_per_level == std::vector<uint32_t>{1});
  CHECK(tree_role(4, 6, 4).parent_distance == 4);
  CHECK(tree_role(3, 6, 4).parent_distance == 3);
  // t0 = max(0, 1, 2, 3)+1 = 4, t4 = 2; t0 = max(4, 2+4)+1 = 7.
  CHECK(tree_completion(zeros(6), 4, unit_costs()).cycle == 7);
}

TEST_CASE("every position but the root sends exactly once and subtrees cover the line", "[mapping][tree]") {
  for (uint32_t fanin : {2u, 3u, 4u, 7u}) {
    for (uint32_t n : {1u, 2u, 5u, 16u, 17u, 100u, 381u}) {
      uint64_t covered = 1;  // the root's own position
      for (uint32_t k = 1; k < n; ++k) {
        const TreeRole role = tree_role(k, n, fanin);
        REQUIRE(role.send_level >= 0);
        REQUIRE(role.parent_distance <= k);
        // A sender's subtree is its own position plus its children's subtrees.
        uint64_t below = 1;
        uint64_t stride = 1;
        for (uint32_t children : role.children_per_level) {
          for (uint32_t m = 1; m <= children; ++m) below += std::min<uint64_t>(stride, n - (k + m * stride));
          stride *= fanin;
        }
        CHECK(below == role.subtree_size);
        if (role.parent_distance == k) covered += role.subtree_size;  // children of the root
      }
      CHECK(covered == n);
    }
  }
}

TEST_CASE("the critical path follows the late child", "[mapping][tree]") {
  std::vector<Timed> ready(2);
  ready[1].cycle = 10;
  ready[1].path[size_t(Category::Compute)] = 10;
  const Timed done = tree_completion(ready, 2, unit_costs());
  CHECK(done.cycle == 12);  // 10 + 1 hop + 1 combine
  CHECK(done.path[size_t(Category::Compute)] == 10);
  CHECK(done.path[size_t(Category::Reduce)] == 2);
}
