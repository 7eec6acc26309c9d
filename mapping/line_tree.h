#pragma once
// Reduction and gather trees along a line of tiles (a row or a column of a region).
//
// Positions 0..n-1, rooted at 0, fan-in f. At level l the stride is s = f^l: a
// node k with k % (s*f) == 0 receives from k + m*s (m = 1..f-1, when < n); a node
// with k % s == 0 but k % (s*f) != 0 sends its subtree [k, min(k+s, n)) to its
// parent k - k % (s*f) and leaves the tree. The engine runs this as tile programs
// (mapping/steps.cpp); tree_completion() evaluates the same tree in closed form.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "mapping/timed.h"

namespace wafersim::mapping {

struct TreeRole {
  std::vector<uint32_t> children_per_level;  // messages received at level 0, 1, ... before sending
  int32_t send_level = -1;                   // -1 for the root
  uint32_t parent_distance = 0;              // positions toward 0
  uint32_t subtree_size = 0;                 // positions this node's message covers (n for the root)
};

TreeRole tree_role(uint32_t k, uint32_t n, uint32_t fanin);
uint32_t tree_levels(uint32_t n, uint32_t fanin);
// Positions a node k covers when it sends at the level of stride s: [k, min(k+s, n)).
// The one place the tree's shape is cut at the end of the line; the emitted
// programs (mapping/steps_base.cpp) and tree_completion() both read it.
inline uint32_t subtree_size(uint64_t k, uint64_t stride, uint64_t n) {
  return uint32_t(std::min<uint64_t>(stride, n - k));
}

struct TreeCosts {
  // Cycles for a message of tree level `level` from a child `distance` positions away.
  std::function<uint64_t(uint32_t level, uint32_t distance, uint64_t bytes)> message_cycles;
  // Bytes a node starting at `start` sends for its subtree of `size` positions.
  std::function<uint64_t(uint32_t start, uint32_t size)> payload_bytes;
  // Cycles a node spends combining `bytes` received at one level.
  std::function<uint64_t(uint64_t bytes)> combine_cycles;
};

// When the root holds the combined result, if node k holds its own part at
// ready[k]. Contention-free: equals the engine with contention off. Messages
// and combining count as Category::Reduce on the critical path.
Timed tree_completion(std::vector<Timed> ready, uint32_t fanin, const TreeCosts& costs);

}  // namespace wafersim::mapping
