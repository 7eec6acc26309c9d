#include "mapping/line_tree.h"

namespace wafersim::mapping {

TreeRole tree_role(uint32_t k, uint32_t n, uint32_t fanin) {
  TreeRole role;
  uint64_t stride = 1;
  while (stride < n) {
    const uint64_t span = stride * fanin;
    if (k % span != 0) {
      role.send_level = int32_t(role.children_per_level.size());
      role.parent_distance = uint32_t(k % span);
      role.subtree_size = subtree_size(k, stride, n);
      return role;
    }
    uint32_t children = 0;
    for (uint32_t m = 1; m < fanin; ++m)
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

Timed tree_completion(std::vector<Timed> ready, uint32_t fanin, const TreeCosts& costs) {
  const uint64_t n = ready.size();
  uint32_t level = 0;
  for (uint64_t stride = 1; stride < n; stride *= fanin, ++level) {
    const uint64_t span = stride * fanin;
    for (uint64_t k = 0; k < n; k += span) {
      Timed done = ready[k];
      uint64_t received_bytes = 0;
      for (uint32_t m = 1; m < fanin; ++m) {
        const uint64_t child = k + m * stride;
        if (child >= n) break;
        const uint64_t bytes = costs.payload_bytes(uint32_t(child), subtree_size(child, stride, n));
        done =
            later(done, ready[child].after(costs.message_cycles(level, uint32_t(m * stride), bytes), Category::Reduce));
        received_bytes += bytes;
      }
      if (k + stride < n) ready[k] = done.after(costs.combine_cycles(received_bytes), Category::Reduce);
    }
  }
  return ready[0];
}

}  // namespace wafersim::mapping
