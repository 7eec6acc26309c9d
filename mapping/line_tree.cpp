#include "mapping/line_tree.h"

#include "models/cost.h"

namespace wafersim::mapping {

TreeShape fanin_tree(uint32_t fanin) {
  TreeShape shape;
  shape.fanin = fanin;
  return shape;
}

TreeShape ktree(uint32_t n, uint32_t levels) {
  TreeShape shape;
  shape.chains = true;
  // The smallest group with group^levels >= n (at least 2, so strides grow).
  shape.fanin = 2;
  for (;;) {
    uint64_t covered = 1;
    for (uint32_t l = 0; l < levels && covered < n; ++l) covered *= shape.fanin;
    if (covered >= n) return shape;
    ++shape.fanin;
  }
}

TreeRole tree_role(uint32_t k, uint32_t n, const TreeShape& shape) {
  TreeRole role;
  const uint32_t fanin = shape.fanin;
  uint64_t stride = 1;
  while (stride < n) {
    const uint64_t span = stride * fanin;
    if (k % span != 0) {
      role.send_level = int32_t(role.children_per_level.size());
      role.parent_distance = shape.chains ? uint32_t(stride) : uint32_t(k % span);
      role.subtree_size = subtree_size(k, stride, n, shape);
      // A chain member also takes in its successor in the chain, at its own level.
      if (shape.chains) role.children_per_level.push_back((k + stride) % span != 0 && k + stride < n ? 1 : 0);
      return role;
    }
    uint32_t children = 0;
    for (uint32_t m = 1; m < (shape.chains ? 2 : fanin); ++m)
      if (k + m * stride < n) ++children;
    role.children_per_level.push_back(children);
    stride = span;
  }
  role.subtree_size = n;
  return role;
}

uint32_t tree_levels(uint32_t n, uint32_t fanin) {
  uint32_t levels = 0;
  for (uint64_t stride = 1; stride < n; stride *= fanin) ++levels;
  return levels;
}

Timed tree_completion(std::vector<Timed> ready, uint32_t fanin, const TreeCosts& costs, std::vector<Timed>* done) {
  const uint64_t n = ready.size();
  const TreeShape shape = fanin_tree(fanin);
  uint32_t level = 0;
  for (uint64_t stride = 1; stride < n; stride *= fanin, ++level) {
    const uint64_t span = stride * fanin;
    for (uint64_t k = 0; k < n; k += span) {
      Timed node = ready[k];
      uint64_t received_bytes = 0;
      for (uint32_t m = 1; m < fanin; ++m) {
        const uint64_t child = k + m * stride;
        if (child >= n) break;
        const uint64_t bytes = costs.payload_bytes(uint32_t(child), subtree_size(child, stride, n, shape));
        node = later(node, ready[child].after(costs.message_cycles(level, uint32_t(child), uint32_t(m * stride), bytes),
                                              Category::Reduce));
        received_bytes += bytes;
      }
      if (k + stride < n) ready[k] = node.after(costs.combine_cycles(received_bytes), Category::Reduce);
    }
  }
  // A node is last updated at the level it sends at: when it sends (sends take no time).
  if (done) *done = ready;
  return ready[0];
}

Timed stream_tree_completion(std::vector<Timed> ready, const TreeShape& shape, const TreeCosts& costs,
                             std::vector<Timed>* done) {
  const uint32_t n = uint32_t(ready.size());
  if (done) done->assign(n, Timed{});
  // Per node once it has sent: when its head left (with the path to it) and when its tail left.
  std::vector<Timed> head(n);
  std::vector<uint64_t> tail(n, 0);
  // Children sit at higher positions than their parent: one pass downwards.
  for (uint32_t k = n; k-- > 0;) {
    const TreeRole role = tree_role(k, n, shape);
    Timed start = ready[k];
    uint64_t inputs_tail = 0, received = 0, ingest = 0;
    uint64_t stride = 1;
    for (size_t level = 0; level < role.children_per_level.size(); ++level, stride *= shape.fanin) {
      uint64_t level_bytes = 0;
      for (uint32_t m = 1; m <= role.children_per_level[level]; ++m) {
        const uint32_t child = uint32_t(k + m * stride);
        const uint64_t bytes = costs.payload_bytes(child, subtree_size(child, stride, n, shape));
        const uint64_t latency = costs.message_cycles(uint32_t(level), child, uint32_t(m * stride), bytes) -
                                 costs.serialization_cycles(bytes);
        start = later(start, head[child].after(latency, Category::Reduce));
        inputs_tail = std::max(inputs_tail, tail[child] + latency);
        level_bytes += bytes;
      }
      // The engine's Wait of a level takes that level's bytes in as one serialisation.
      received += level_bytes;
      ingest += costs.serialization_cycles(level_bytes);
    }
    const uint64_t busy = std::max(received == 0 ? 0 : costs.combine_cycles(received), ingest);
    if (role.send_level < 0) {
      // The root combines after the streams only when they bring bytes (Step::emit_tree): zero-byte streams end
      // when their heads arrive.
      const uint64_t end = received == 0 ? start.cycle : stream_tail_departure(start.cycle, busy, inputs_tail);
      const Timed result = start.after(end - start.cycle, Category::Reduce);
      if (done) (*done)[k] = result;
      return result;
    }
    const uint64_t out = costs.payload_bytes(k, role.subtree_size);
    head[k] = start;
    tail[k] = stream_tail_departure(start.cycle, std::max(costs.serialization_cycles(out), busy), inputs_tail);
    if (done) (*done)[k] = start.after(tail[k] - start.cycle, Category::Reduce);
  }
  return ready[0];  // n == 0
}

}  // namespace wafersim::mapping
