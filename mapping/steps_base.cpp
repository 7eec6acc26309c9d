// Shared machinery of the steps: task builders and line trees.
#include <algorithm>
#include <stdexcept>

#include "mapping/line_tree.h"
#include "mapping/steps.h"
#include "models/cost.h"

namespace wafersim::mapping {

const Timed& Front::latest() const {
  if (kind == FrontKind::Root) return root;
  const Timed* last = &at[0];
  for (const Timed& t : at) last = &later(*last, t);
  return *last;
}

uint32_t Step::relayed_patterns() const {
  const uint32_t n = patterns();
  return n > env_.colors_available ? n - env_.colors_available : 0;
}

uint64_t Step::line_message_cycles(uint32_t hops, uint64_t bytes, uint32_t pattern) const {
  return message_cycles_for_tokens(hops, 0, relays(pattern), bytes);
}

uint64_t Step::message_cycles_for_tokens(uint32_t hops, uint32_t turns, uint32_t relays, uint64_t bytes) const {
  return message_cycles(env_.fabric, hops, turns, relays, bytes * env_.tokens);
}

uint64_t Step::cycles(Dtype dtype, const Work& work) const {
  return compute_cycles(env_.tile, dtype, work * env_.tokens);
}

void Step::emit_tokens(uint32_t i, uint32_t j, std::vector<Task>& out) const {
  const size_t first = out.size();
  emit(i, j, out);
  if (env_.tokens == 1) return;
  for (size_t t = first; t < out.size(); ++t) {
    Task& task = out[t];
    task.work = task.work * env_.tokens;
    task.work_per_position = task.work_per_position * env_.tokens;
    const uint64_t bytes = uint64_t(task.bytes) * env_.tokens;
    // The compiler caps the chunk so that every message's bytes fit a task (prefill_plan.cpp).
    if (bytes > UINT32_MAX) throw std::logic_error("a message of the chunk exceeds 4 GiB");
    task.bytes = uint32_t(bytes);
  }
}

MulticastTask Step::multicast(uint32_t pattern) const {
  return MulticastTask().relays(relays(pattern)).layer(env_.layer);
}

SendTask Step::send_local(int32_t di, int32_t dj, uint32_t pattern) const {
  return SendTask().dx(env_.geo.dx(di, dj)).dy(env_.geo.dy(di, dj)).relays(relays(pattern)).layer(env_.layer);
}

uint64_t Step::tree_payload(const Tree& tree, uint32_t start, uint32_t size) const {
  if (!tree.gather) return tree.bytes_per_position;
  if (tree.group.empty()) return uint64_t(size) * tree.bytes_per_position;
  // Groups are contiguous runs of positions.
  return uint64_t(tree.group[start + size - 1] - tree.group[start] + 1) * tree.bytes_per_position;
}

Work Step::combine_work(const Tree& tree, uint64_t received_bytes) const {
  if (tree.gather && tree.group.empty()) return Work{0, 0, received_bytes};  // concatenation: store only
  // One add per element received, both operands read, the sum written.
  return Work{received_bytes / dtype_bytes(tree.sum, 1), 2 * received_bytes, received_bytes};
}

TreeShape Step::tree_shape(uint32_t n) const {
  return env_.ktree_levels > 0 ? ktree(n, env_.ktree_levels) : fanin_tree(env_.fanin);
}

uint32_t Step::tree_level_count(uint32_t n) const { return tree_levels(n, tree_shape(n).fanin); }

uint32_t Step::tree_patterns(uint32_t n) const { return tree_level_count(n) * (tree_shape(n).chains ? 2 : 1); }

uint32_t Step::tree_pattern(const Tree& tree, uint32_t level, uint32_t sender, uint32_t distance) const {
  if (!tree_shape(tree.n).chains) return tree.pattern + level;
  // Along a chain the colour alternates: a chain member's stride is its distance to its parent.
  return tree.pattern + 2 * level + sender / distance % 2;
}

void Step::emit_tree(const Tree& tree, uint32_t position, std::vector<Task>& out) const {
  const TreeShape shape = tree_shape(tree.n);
  const TreeRole role = tree_role(position, tree.n, shape);
  const bool streamed = shape.chains;
  uint64_t stride = 1, received = 0;
  for (size_t level = 0; level < role.children_per_level.size(); ++level, stride *= shape.fanin) {
    const uint32_t children = role.children_per_level[level];
    if (children == 0) continue;
    uint64_t level_bytes = 0;
    for (uint32_t m = 1; m <= children; ++m) {
      const uint64_t child = position + m * stride;
      level_bytes += tree_payload(tree, uint32_t(child), subtree_size(child, stride, tree.n, shape));
    }
    received += level_bytes;
    if (streamed) {
      out.push_back(wait().tag(uint16_t(tree.tag + level)).messages(children).heads_only(uint32_t(level_bytes)));
    } else {
      out.push_back(wait().tag(uint16_t(tree.tag + level)).messages(children));
      out.push_back(compute().work(combine_work(tree, level_bytes)).dtype(tree.sum).category(Category::Reduce));
    }
  }
  if (role.send_level < 0) {
    if (streamed && received > 0)
      out.push_back(
          compute().work(combine_work(tree, received)).dtype(tree.sum).category(Category::Reduce).after_streams());
    return;
  }
  const int32_t back = -int32_t(role.parent_distance);
  const uint32_t level = uint32_t(role.send_level);
  const uint32_t pattern = tree_pattern(tree, level, position, role.parent_distance);
  SendTask send = send_local(tree.along_row ? 0 : back, tree.along_row ? back : 0, pattern)
                      .bytes(tree_payload(tree, position, role.subtree_size))
                      .tag(uint16_t(tree.tag + level))
                      .category(Category::Reduce);
  if (streamed) send.streamed(received == 0 ? Work{} : combine_work(tree, received), tree.sum);
  out.push_back(send);
}

void Step::tree_signature(const Tree& tree, uint32_t position, std::vector<uint64_t>& out) const {
  std::vector<Task> tasks;
  emit_tree(tree, position, tasks);
  out.push_back(tasks.size());
  for (const Task& task : tasks) {
    out.push_back(uint64_t(task.op) | uint64_t(task.count) << 8 | uint64_t(task.tag) << 40);
    out.push_back(uint64_t(uint32_t(task.dx)) | uint64_t(uint32_t(task.dy)) << 32);
    out.push_back(uint64_t(task.bytes) | uint64_t(task.relays) << 32);
    out.push_back(task.work.read_bytes);
  }
}

Timed Step::tree_time(const Tree& tree, std::vector<Timed> ready) const {
  const TreeShape shape = tree_shape(tree.n);
  TreeCosts costs;
  costs.message_cycles = [&](uint32_t level, uint32_t child, uint32_t distance, uint64_t bytes) {
    return line_message_cycles(distance, bytes, tree_pattern(tree, level, child, distance));
  };
  costs.payload_bytes = [&](uint32_t start, uint32_t size) { return tree_payload(tree, start, size); };
  costs.combine_cycles = [&](uint64_t bytes) { return cycles(tree.sum, combine_work(tree, bytes)); };
  costs.serialization_cycles = [&](uint64_t bytes) { return serialization_cycles(env_.fabric, bytes * env_.tokens); };
  if (shape.chains) return stream_tree_completion(std::move(ready), shape, costs);
  return tree_completion(std::move(ready), env_.fanin, costs);
}

}  // namespace wafersim::mapping
