#include "mapping/line_tree.h"

#include <map>
#include <tuple>

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
  // The smallest group with group^levels >= n (at least 2, so strides grow). The closed forms ask for the same
  // few lines at every step: each answer is kept, per thread, by level count and line length.
  thread_local std::vector<std::vector<uint32_t>> known;
  if (known.size() <= levels) known.resize(levels + 1);
  std::vector<uint32_t>& by_length = known[levels];
  if (by_length.size() <= n) by_length.resize(size_t(n) + 1, 0);
  uint32_t& fanin = by_length[n];
  if (fanin == 0) {
    fanin = 2;
    for (;;) {
      uint64_t covered = 1;
      for (uint32_t l = 0; l < levels && covered < n; ++l) covered *= fanin;
      if (covered >= n) break;
      ++fanin;
    }
  }
  shape.fanin = fanin;
  return shape;
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

LineRole line_role(uint32_t k, uint32_t n, uint32_t root, const TreeShape& shape) {
  LineRole out;
  // Side +1 runs from the root to the line's end, side -1 from the root to its start.
  auto position = [&](int side, uint64_t offset) { return uint32_t(side > 0 ? root + offset : root - offset); };
  auto take_side = [&](int side, uint32_t offset) {
    const TreeRole role = tree_role(offset, side > 0 ? n - root : root + 1, shape);
    uint64_t stride = 1;
    for (uint32_t level = 0; level < role.children_per_level.size(); ++level, stride *= shape.fanin)
      for (uint32_t m = 1; m <= role.children_per_level[level]; ++m)
        out.children.push_back({level, position(side, offset + m * stride)});
    return role;
  };
  if (k == root) {
    take_side(+1, 0);
    if (root > 0) take_side(-1, 0);
    std::stable_sort(out.children.begin(), out.children.end(),
                     [](const LineRole::Child& a, const LineRole::Child& b) { return a.level < b.level; });
    out.size = n;
    return out;
  }
  const int side = k > root ? +1 : -1;
  out.offset = side > 0 ? k - root : root - k;
  const TreeRole role = take_side(side, out.offset);
  out.send_level = role.send_level;
  out.distance = role.parent_distance;
  out.parent = position(side, out.offset - out.distance);
  out.size = role.subtree_size;
  out.first = side > 0 ? k : k + 1 - out.size;
  return out;
}

const LineTree& line_tree(uint32_t n, uint32_t root, const TreeShape& shape) {
  // One per thread: plans are compiled and timed on any thread.
  thread_local std::map<std::tuple<uint32_t, uint32_t, uint32_t, bool>, LineTree> cache;
  auto [it, fresh] = cache.try_emplace({n, root, shape.fanin, shape.chains});
  LineTree& tree = it->second;
  if (!fresh) return tree;
  tree.roles.reserve(n);
  for (uint32_t k = 0; k < n; ++k) tree.roles.push_back(line_role(k, n, root, shape));
  for (uint32_t offset = side_length(n, root); offset-- > 1;) {
    if (root + offset < n) tree.order.push_back(root + offset);
    if (offset <= root) tree.order.push_back(root - offset);
  }
  tree.order.push_back(root);
  return tree;
}

Timed tree_completion(std::vector<Timed> ready, uint32_t root, uint32_t fanin, const TreeCosts& costs,
                      std::vector<Timed>* done) {
  const uint32_t n = uint32_t(ready.size());
  if (n == 0) return Timed{};
  const LineTree& layout = line_tree(n, root, fanin_tree(fanin));
  for (const uint32_t k : layout.order) {
    const LineRole& role = layout.roles[k];
    Timed& node = ready[k];
    // Each level: wait for its children, then combine what they brought.
    for (size_t c = 0; c < role.children.size();) {
      const uint32_t level = role.children[c].level;
      uint64_t received_bytes = 0;
      Timed arrived = node;
      for (; c < role.children.size() && role.children[c].level == level; ++c) {
        const uint32_t from = role.children[c].position;
        const LineRole& child = layout.roles[from];
        const uint64_t bytes = costs.payload_bytes(child.first, child.size);
        arrived = later(arrived,
                        ready[from].after(costs.message_cycles(level, from, child.distance, bytes), Category::Reduce));
        received_bytes += bytes;
      }
      node = arrived.after(costs.combine_cycles(received_bytes), Category::Reduce);
    }
  }
  // A node's time is when it sends (sends take no time), the root's when it holds the result.
  const Timed result = ready[root];
  if (done) *done = std::move(ready);
  return result;
}

Timed stream_tree_completion(std::vector<Timed> ready, uint32_t root, const TreeShape& shape, const TreeCosts& costs,
                             std::vector<Timed>* done, Timed* heads) {
  const uint32_t n = uint32_t(ready.size());
  if (heads) *heads = Timed{};
  if (n == 0) return Timed{};
  if (done) done->assign(n, Timed{});
  const LineTree& layout = line_tree(n, root, shape);
  // Per node once it has sent: when its head left (with the path to it) and when its tail left.
  std::vector<Timed> head(n);
  std::vector<uint64_t> tail(n, 0);
  Timed result;
  for (const uint32_t k : layout.order) {
    const LineRole& role = layout.roles[k];
    Timed start = ready[k];
    uint64_t inputs_tail = 0, received = 0, ingest = 0;
    for (size_t c = 0; c < role.children.size();) {
      const uint32_t level = role.children[c].level;
      uint64_t level_bytes = 0;
      for (; c < role.children.size() && role.children[c].level == level; ++c) {
        const uint32_t from = role.children[c].position;
        const LineRole& child = layout.roles[from];
        const uint64_t bytes = costs.payload_bytes(child.first, child.size);
        const uint64_t latency =
            costs.message_cycles(level, from, child.distance, bytes) - costs.serialization_cycles(bytes);
        start = later(start, head[from].after(latency, Category::Reduce));
        inputs_tail = std::max(inputs_tail, tail[from] + latency);
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
      result = start.after(end - start.cycle, Category::Reduce);
      if (heads) *heads = start;
      if (done) (*done)[k] = result;
      continue;
    }
    const uint64_t out = costs.payload_bytes(role.first, role.size);
    head[k] = start;
    tail[k] = stream_tail_departure(start.cycle, std::max(costs.serialization_cycles(out), busy), inputs_tail);
    if (done) (*done)[k] = start.after(tail[k] - start.cycle, Category::Reduce);
  }
  return result;
}

}  // namespace wafersim::mapping
