// Line trees: roles and completion times against trees worked out by hand.
#include "mapping/line_tree.h"

#include <catch2/catch.hpp>

using namespace wafersim;
using namespace wafersim::mapping;

namespace {

// Unit costs: a message takes as many cycles as positions it travels, combining takes 1.
TreeCosts unit_costs() {
  TreeCosts costs;
  costs.message_cycles = [](uint32_t, uint32_t, uint32_t distance, uint64_t) { return uint64_t(distance); };
  costs.payload_bytes = [](uint32_t, uint32_t size) { return uint64_t(size); };
  costs.combine_cycles = [](uint64_t) { return uint64_t(1); };
  return costs;
}

std::vector<Timed> zeros(size_t n) { return std::vector<Timed>(n); }

}  // namespace

TEST_CASE("binary tree over five positions", "[mapping][tree]") {
  // Level 0: 1 -> 0, 3 -> 2; level 1: 2 -> 0; level 2: 4 -> 0.
  CHECK(tree_levels(5, 2) == 3);
  const TreeRole root = tree_role(0, 5, fanin_tree(2));
  CHECK(root.send_level == -1);
  CHECK(root.children_per_level == std::vector<uint32_t>{1, 1, 1});
  const TreeRole two = tree_role(2, 5, fanin_tree(2));
  CHECK(two.children_per_level == std::vector<uint32_t>{1});
  CHECK(two.send_level == 1);
  CHECK(two.parent_distance == 2);
  CHECK(two.subtree_size == 2);
  const TreeRole four = tree_role(4, 5, fanin_tree(2));
  CHECK(four.children_per_level == std::vector<uint32_t>{0, 0});
  CHECK(four.send_level == 2);
  CHECK(four.parent_distance == 4);
  CHECK(four.subtree_size == 1);
  const TreeRole three = tree_role(3, 5, fanin_tree(2));
  CHECK(three.send_level == 0);
  CHECK(three.parent_distance == 1);

  // t0 = max(0, 0+1)+1 = 2, t2 = 2; then t0 = max(2, 2+2)+1 = 5; then max(5, 0+4)+1 = 6.
  CHECK(tree_completion(zeros(5), 0, 2, unit_costs()).cycle == 6);
}

TEST_CASE("fan-in four over six positions", "[mapping][tree]") {
  // Level 0: 1, 2, 3 -> 0 and 5 -> 4; level 1: 4 -> 0.
  CHECK(tree_role(0, 6, fanin_tree(4)).children_per_level == std::vector<uint32_t>{3, 1});
  CHECK(tree_role(4, 6, fanin_tree(4)).children_per_level == std::vector<uint32_t>{1});
  CHECK(tree_role(4, 6, fanin_tree(4)).parent_distance == 4);
  CHECK(tree_role(3, 6, fanin_tree(4)).parent_distance == 3);
  // t0 = max(0, 1, 2, 3)+1 = 4, t4 = 2; t0 = max(4, 2+4)+1 = 7.
  CHECK(tree_completion(zeros(6), 0, 4, unit_costs()).cycle == 7);
}

TEST_CASE("every position but the root sends exactly once and subtrees cover the line", "[mapping][tree]") {
  for (uint32_t fanin : {2u, 3u, 4u, 7u}) {
    for (uint32_t n : {1u, 2u, 5u, 16u, 17u, 100u, 381u}) {
      uint64_t covered = 1;  // the root's own position
      for (uint32_t k = 1; k < n; ++k) {
        const TreeRole role = tree_role(k, n, fanin_tree(fanin));
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
  const Timed done = tree_completion(ready, 0, 2, unit_costs());
  CHECK(done.cycle == 12);  // 10 + 1 hop + 1 combine
  CHECK(done.path[size_t(Category::Compute)] == 10);
  CHECK(done.path[size_t(Category::Reduce)] == 2);
}

namespace {

// Streamed costs: a message's latency is the distance, its body `bytes` cycles; combining takes 1.
TreeCosts stream_costs() {
  TreeCosts costs;
  costs.message_cycles = [](uint32_t, uint32_t, uint32_t distance, uint64_t bytes) { return distance + bytes; };
  costs.serialization_cycles = [](uint64_t bytes) { return bytes; };
  costs.payload_bytes = [](uint32_t, uint32_t size) { return uint64_t(size); };
  costs.combine_cycles = [](uint64_t) { return uint64_t(1); };
  return costs;
}

}  // namespace

TEST_CASE("a K-tree of two levels over five positions", "[mapping][tree]") {
  // Group size 3 (3^2 >= 5 > 2^2). Level 0 chains: 2 -> 1 -> 0 and 4 -> 3; level 1: 3 -> 0.
  const TreeShape shape = ktree(5, 2);
  CHECK(shape.chains);
  CHECK(shape.fanin == 3);
  CHECK(tree_role(0, 5, shape).children_per_level == std::vector<uint32_t>{1, 1});
  const TreeRole one = tree_role(1, 5, shape);
  CHECK(one.send_level == 0);
  CHECK(one.parent_distance == 1);
  CHECK(one.children_per_level == std::vector<uint32_t>{1});
  CHECK(one.subtree_size == 2);
  CHECK(tree_role(2, 5, shape).children_per_level == std::vector<uint32_t>{0});
  const TreeRole three = tree_role(3, 5, shape);
  CHECK(three.send_level == 1);
  CHECK(three.parent_distance == 3);
  CHECK(three.children_per_level == std::vector<uint32_t>{1, 0});
  CHECK(three.subtree_size == 2);
  CHECK(tree_role(4, 5, shape).subtree_size == 1);

  // Heads/tails leaving: 4: 0/1; 3: 1/max(1+2, 2+1) = 3; 2: 0/1; 1: 1/3.
  // Root: heads from 1 at 1+1 and from 3 at 1+3, so it starts at 4; tails
  // arrive at 3+1 and 3+3; it takes in 2+2 bytes through its one ramp, so it
  // is done at max(4 + 4, 6 + 1) = 8.
  const Timed done = stream_tree_completion(zeros(5), 0, shape, stream_costs());
  CHECK(done.cycle == 8);
  CHECK(done.path[size_t(Category::Reduce)] == 8);
}

TEST_CASE("a streamed chain pays its payload's serialisation once", "[mapping][tree]") {
  TreeCosts costs = stream_costs();
  costs.payload_bytes = [](uint32_t, uint32_t) { return uint64_t(100); };  // a reduction: constant payload
  costs.combine_cycles = [](uint64_t) { return uint64_t(0); };
  const TreeShape chain = ktree(4, 1);
  CHECK(chain.fanin == 4);
  // Tails leave 3 at 100, 2 at 102, 1 at 104; the root adds the last wavelet at 106.
  CHECK(stream_tree_completion(zeros(4), 0, chain, costs).cycle == 106);
  // Store-and-forward, the same payload would cross three levels one after the other.
  TreeCosts whole = unit_costs();
  whole.message_cycles = costs.message_cycles;
  whole.payload_bytes = costs.payload_bytes;
  CHECK(tree_completion(zeros(4), 0, 2, whole).cycle > 200);
}

TEST_CASE("K-trees send every position once and their subtrees cover the line", "[mapping][tree]") {
  for (uint32_t levels : {1u, 2u, 3u}) {
    for (uint32_t n : {1u, 2u, 5u, 16u, 17u, 100u, 381u, 420u}) {
      const TreeShape shape = ktree(n, levels);
      CHECK(tree_levels(n, shape.fanin) <= levels);
      uint64_t covered = 1;
      for (uint32_t k = 1; k < n; ++k) {
        const TreeRole role = tree_role(k, n, shape);
        REQUIRE(role.send_level >= 0);
        REQUIRE(role.parent_distance <= k);
        uint64_t below = 1, stride = 1, children = 0;
        for (uint32_t c : role.children_per_level) {
          if (c > 0) below += subtree_size(k + stride, stride, n, shape);
          children += c;
          stride *= shape.fanin;
        }
        CHECK(below == role.subtree_size);
        CHECK(children <= role.children_per_level.size());  // at most one child per level
        if (role.parent_distance == k) covered += role.subtree_size;
      }
      CHECK(covered == n);
    }
  }
}

TEST_CASE("a middle root: each side is a tree toward it, senders cover the line once, parents lie toward it",
          "[mapping][tree]") {
  for (const TreeShape shape : {fanin_tree(2), fanin_tree(3), ktree(211, 2), ktree(211, 1)}) {
    for (uint32_t n : {2u, 5u, 16u, 17u, 420u}) {
      const uint32_t root = (n - 1) / 2;
      const LineRole top = line_role(root, n, root, shape);
      CHECK(top.send_level == -1);
      CHECK(top.size == n);
      std::vector<uint32_t> covers(n, 0);
      covers[root] = 1;
      uint64_t children = top.children.size();
      for (uint32_t k = 0; k < n; ++k) {
        if (k == root) continue;
        const LineRole role = line_role(k, n, root, shape);
        REQUIRE(role.send_level >= 0);
        // The parent is between the node and the root (or the root itself).
        CHECK((k > root ? role.parent < k && role.parent >= root : role.parent > k && role.parent <= root));
        CHECK(role.offset == (k > root ? k - root : root - k));
        // The node's message covers its own position and lies on its side of the root.
        CHECK(role.first <= k);
        CHECK(k < role.first + role.size);
        CHECK((k > root ? role.first > root : role.first + role.size <= root));
        children += role.children.size();
        if (role.parent == root)
          for (uint32_t p = role.first; p < role.first + role.size; ++p) ++covers[p];
      }
      CHECK(children == n - 1);  // every node but the root is some node's child once
      CHECK(std::all_of(covers.begin(), covers.end(), [](uint32_t c) { return c == 1; }));
    }
  }
}

TEST_CASE("a middle root reduces both halves at once: half the hops of a root at the end", "[mapping][tree]") {
  // A chain of 9 (one level): from the end, 8 hops and 8 combines; from the middle, 4 hops each side and the
  // root's combines of both sides.
  const TreeShape chain = ktree(9, 1);
  TreeCosts costs = stream_costs();
  costs.payload_bytes = [](uint32_t, uint32_t) { return uint64_t(0); };  // heads only: latency alone
  costs.combine_cycles = [](uint64_t) { return uint64_t(0); };
  CHECK(stream_tree_completion(zeros(9), 0, chain, costs).cycle == 8);
  CHECK(stream_tree_completion(zeros(9), 4, ktree(5, 1), costs).cycle == 4);
  // Store-and-forward fan-in 2 over 9 positions, from the end: the root combines at 2 (position 1's message),
  // 5 (position 2's, sent at 2 after its own level, 2 hops), 10 (position 4's, sent at 5, 4 hops) and 11
  // (position 8's, sent at 0, 8 hops).
  CHECK(tree_completion(zeros(9), 0, 2, unit_costs()).cycle == 11);
  // From the middle each side is a tree over 5 positions and the root takes both sides' children at each
  // level: at 2 (offsets 1, 1 hop), 5 (offsets 2, sent at 2, 2 hops) and 6 (offsets 4, sent at 0, 4 hops).
  CHECK(tree_completion(zeros(9), 4, 2, unit_costs()).cycle == 6);
}

TEST_CASE("a K-tree's chains are the shortest whose K levels cover the line", "[mapping][tree]") {
  for (uint32_t levels = 1; levels <= 4; ++levels)
    for (uint32_t n = 1; n <= 4000; ++n) {
      const uint64_t f = ktree(n, levels).fanin;
      uint64_t covered = 1, below = 1;
      for (uint32_t l = 0; l < levels; ++l) covered *= f, below *= f - 1;
      INFO("n " << n << ", " << levels << " levels: chains of " << f);
      REQUIRE(covered >= n);
      REQUIRE((f == 2 || below < n));
    }
}
