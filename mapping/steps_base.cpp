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
  scale_to_tokens(out, first);
}

void Step::scale_to_tokens(std::vector<Task>& out, size_t first) const {
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
  // Both sides of a middle root take the shape of the longer one.
  const uint32_t side = side_length(n, env_.geo.line_root(n));
  return env_.ktree_levels > 0 ? ktree(side, env_.ktree_levels) : fanin_tree(env_.fanin);
}

uint32_t Step::tree_level_count(uint32_t n) const {
  return tree_levels(side_length(n, env_.geo.line_root(n)), tree_shape(n).fanin);
}

uint32_t Step::side_patterns(uint32_t n) const { return tree_level_count(n) * (tree_shape(n).chains ? 2 : 1); }

uint32_t Step::tree_patterns(uint32_t n) const {
  // Each side of a middle root takes patterns of its own: the root's router takes both sides in, one colour each.
  const uint32_t root = env_.geo.line_root(n);
  const bool two_sided = root > 0 && root + 1 < n;
  return two_sided ? 2 * side_patterns(n) : side_patterns(n);
}

uint32_t Step::tree_pattern(const Tree& tree, uint32_t level, uint32_t position, uint32_t distance) const {
  const uint32_t root = env_.geo.line_root(tree.n);
  const TreeShape shape = tree_shape(tree.n);
  const uint32_t offset = position > root ? position - root : root - position;
  // Along a chain the colour alternates: a chain member's stride is its distance to its parent.
  const uint32_t within = shape.chains ? 2 * level + offset / distance % 2 : level;
  // The side before the root takes the patterns after the other side's.
  return tree.pattern + within + (position < root ? side_patterns(tree.n) : 0);
}

void Step::emit_line_multicast(uint32_t n, uint32_t root, uint32_t position, Dir dir, uint32_t pattern, uint64_t bytes,
                               uint16_t tag, std::vector<Task>& out) const {
  if (n < 2) return;
  if (position != root) {
    out.push_back(wait().tag(tag).messages(1));
    return;
  }
  // One injection: the root's router copies it to both sides.
  if (root + 1 == n)
    out.push_back(multicast(pattern).dir(opposite(dir)).tiles(root).bytes(bytes).tag(tag));
  else
    out.push_back(multicast(pattern).dir(dir).tiles(n - 1 - root).tiles_back(root).bytes(bytes).tag(tag));
}

Timed Step::line_multicast_arrival(const Timed& from, uint32_t root, uint32_t position, uint64_t bytes,
                                   uint32_t pattern) const {
  const uint32_t hops = position > root ? position - root : root - position;
  return from.after(hops == 0 ? 0 : line_message_cycles(hops, bytes, pattern), Category::Fabric);
}

void Step::emit_tree(const Tree& tree, uint32_t position, std::vector<Task>& out) const {
  const TreeShape shape = tree_shape(tree.n);
  const uint32_t root = env_.geo.line_root(tree.n);
  const std::vector<LineRole>& roles = line_tree(tree.n, root, shape).roles;
  const LineRole& role = roles[position];
  const bool streamed = shape.chains;
  uint64_t received = 0;
  for (size_t c = 0; c < role.children.size();) {
    const uint32_t level = role.children[c].level;
    uint32_t children = 0;
    uint64_t level_bytes = 0;
    for (; c < role.children.size() && role.children[c].level == level; ++c, ++children) {
      const LineRole& child = roles[role.children[c].position];
      level_bytes += tree_payload(tree, child.first, child.size);
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
  const int32_t back = int32_t(role.parent) - int32_t(position);
  const uint32_t level = uint32_t(role.send_level);
  const uint32_t pattern = tree_pattern(tree, level, position, role.distance);
  SendTask send = send_local(tree.along_row ? 0 : back, tree.along_row ? back : 0, pattern)
                      .bytes(tree_payload(tree, role.first, role.size))
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

Timed Step::tree_time(const Tree& tree, std::vector<Timed> ready, std::vector<Timed>* done, Timed* heads) const {
  const TreeShape shape = tree_shape(tree.n);
  TreeCosts costs;
  costs.message_cycles = [&](uint32_t level, uint32_t position, uint32_t distance, uint64_t bytes) {
    return line_message_cycles(distance, bytes, tree_pattern(tree, level, position, distance));
  };
  costs.payload_bytes = [&](uint32_t start, uint32_t size) { return tree_payload(tree, start, size); };
  costs.combine_cycles = [&](uint64_t bytes) { return cycles(tree.sum, combine_work(tree, bytes)); };
  costs.serialization_cycles = [&](uint64_t bytes) { return serialization_cycles(env_.fabric, bytes * env_.tokens); };
  const uint32_t root = env_.geo.line_root(tree.n);
  if (shape.chains) return stream_tree_completion(std::move(ready), root, shape, costs, done, heads);
  const Timed result = tree_completion(std::move(ready), root, env_.fanin, costs, done);
  if (heads) *heads = result;
  return result;
}

}  // namespace wafersim::mapping
