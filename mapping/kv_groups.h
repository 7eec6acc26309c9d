#pragma once
// The KV-head groups of the distributed attention: min(KV heads, columns)
// groups of near-equal runs of columns, each owning an equal share of the KV
// heads (mapping/steps.cpp and mapping/grid_attention.cpp lay attention out
// over them; the QKV rows are ordered to match).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace wafersim::mapping {

struct KvGroups {
  uint32_t count = 1;
  uint32_t heads_per_group = 1;  // KV heads of each group (the last may hold fewer)
  uint32_t widest = 1;           // columns of the widest group
  std::vector<uint32_t> start;   // first column of each group, then the column count
  std::vector<uint32_t> of;      // group of each column

  KvGroups(uint32_t kv_heads, uint32_t columns) {
    count = std::min(kv_heads, columns);
    heads_per_group = (kv_heads + count - 1) / count;
    start.resize(count + 1);
    for (uint32_t group = 0; group <= count; ++group) start[group] = uint32_t(uint64_t(group) * columns / count);
    of.resize(columns);
    for (uint32_t group = 0; group < count; ++group) {
      for (uint32_t j = start[group]; j < start[group + 1]; ++j) of[j] = group;
      widest = std::max(widest, this->columns(group));
    }
  }
  uint32_t columns(uint32_t group) const { return start[group + 1] - start[group]; }
};

}  // namespace wafersim::mapping
