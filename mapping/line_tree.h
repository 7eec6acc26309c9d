#pragma once
// Reduction and gather trees along a line of tiles (a row or a column of a region).
//
// Positions 0..n-1, rooted at 0 (line_role: at any position). At level l the stride is s = f^l and the span
// s*f. Two shapes (TreeShape):
//  - a fan-in tree (mapping.reduction: tree): a node k with k % (s*f) == 0
//    receives from k + m*s (m = 1..f-1, when < n); a node with k % s == 0 but
//    k % (s*f) != 0 sends its subtree [k, min(k+s, n)) to its parent
//    k - k % (s*f) and leaves the tree. Run store-and-forward.
//  - a K-tree of chains (mapping.reduction: ktree, after WaferLLM's K-tree
//    allreduce): each span of f nodes of level l is a chain in which node k
//    receives from k + s and sends to k - s; f is the smallest group size with
//    f^K >= n, so the tree has K levels and a node at most one child per level.
//    Run streamed (Task::stream): a node forwards as its inputs arrive.
// The engine runs these as tile programs (mapping/steps_base.cpp);
// tree_completion() and stream_tree_completion() evaluate them in closed form.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "mapping/timed.h"

namespace wafersim::mapping {

struct TreeShape {
  uint32_t fanin = 2;   // the stride factor f: children per node, or nodes per chain
  bool chains = false;  // a K-tree of chains (else a fan-in tree)
};
TreeShape fanin_tree(uint32_t fanin);
// K levels of chains over n positions.
TreeShape ktree(uint32_t n, uint32_t levels);

struct TreeRole {
  std::vector<uint32_t> children_per_level;  // messages received at level 0, 1, ... before sending
  int32_t send_level = -1;                   // -1 for the root
  uint32_t parent_distance = 0;              // positions toward 0
  uint32_t subtree_size = 0;                 // positions this node's message covers (n for the root)
};

TreeRole tree_role(uint32_t k, uint32_t n, const TreeShape& shape);
uint32_t tree_levels(uint32_t n, uint32_t fanin);
// Positions a node k covers when it sends at the level of stride s: [k, min(k+s, n))
// in a fan-in tree, the rest of its chain [k, min(end of its span, n)) in a
// K-tree. The one place the tree's shape is cut at the end of the line; the
// emitted programs (mapping/steps_base.cpp) and the closed forms all read it.
inline uint32_t subtree_size(uint64_t k, uint64_t stride, uint64_t n, const TreeShape& shape) {
  if (!shape.chains) return uint32_t(std::min<uint64_t>(stride, n - k));
  const uint64_t span = stride * shape.fanin;
  return uint32_t(std::min<uint64_t>((k / span + 1) * span, n) - k);
}

struct TreeCosts {
  // Cycles for a message of tree level `level` from the node at `position`, `distance` positions away from its
  // parent.
  std::function<uint64_t(uint32_t level, uint32_t position, uint32_t distance, uint64_t bytes)> message_cycles;
  // Bytes a node starting at `start` sends for its subtree of `size` positions.
  std::function<uint64_t(uint32_t start, uint32_t size)> payload_bytes;
  // Cycles a node spends combining `bytes` received at one level (streamed: at all levels).
  std::function<uint64_t(uint64_t bytes)> combine_cycles;
  // Streamed only: the part of message_cycles the body takes on a link.
  std::function<uint64_t(uint64_t bytes)> serialization_cycles;
};

// A tree over a line of n positions rooted at position `root` (0: the line's
// first tile). With a root inside the line (WaferLLM's allreduce roots it in
// the middle) each side is a one-sided tree of its own over its positions
// counted from the root (tree_role), both of the same shape, and the root
// takes both sides' children: the two halves reduce at once.
struct LineRole {
  struct Child {
    uint32_t level = 0, position = 0;
  };
  std::vector<Child> children;   // by level, then the side after the root before the side before it
  int32_t send_level = -1;       // -1 for the root
  uint32_t parent = 0;           // position
  uint32_t distance = 0;         // to the parent
  uint32_t offset = 0;           // from the root
  uint32_t first = 0, size = 0;  // the positions [first, first + size) its message covers (the root: all)
};
LineRole line_role(uint32_t k, uint32_t n, uint32_t root, const TreeShape& shape);
// Every position's role, and the order to visit them in (farthest from the
// root first, every child before its parent), computed once per tree and
// kept for the thread's lifetime: the closed forms time the same few trees at
// every step.
struct LineTree {
  std::vector<LineRole> roles;
  std::vector<uint32_t> order;
};
const LineTree& line_tree(uint32_t n, uint32_t root, const TreeShape& shape);
// Positions on the longer side of the root, the root included: what sizes the
// shape of a two-sided tree (n for a root at 0).
inline uint32_t side_length(uint32_t n, uint32_t root) { return std::max(root + 1, n - root); }

// When the root holds the combined result, if node k holds its own part at
// ready[k]. Contention-free: equals the engine with contention off. Messages
// and combining count as Category::Reduce on the critical path.
// `done` (optional) receives when each node's tile has finished its part: its
// send left (the root: the result is there).
Timed tree_completion(std::vector<Timed> ready, uint32_t root, uint32_t fanin, const TreeCosts& costs,
                      std::vector<Timed>* done = nullptr);

// The same for a streamed tree of any shape (models/cost.h, stream_tail_departure):
// a node's stream starts when its own part and its children's heads are there
// and ends when its serialisation (or its combining) is done and its children's
// tails have arrived and been added.
// `done` as above: a node's tile is busy until its stream's tail has left.
// `heads` (optional) receives when the streams' heads had met at the root:
// the result is that, then the wait for their tails (Category::Reduce).
Timed stream_tree_completion(std::vector<Timed> ready, uint32_t root, const TreeShape& shape, const TreeCosts& costs,
                             std::vector<Timed>* done = nullptr, Timed* heads = nullptr);

}  // namespace wafersim::mapping
