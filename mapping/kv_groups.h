#pragma once
// The attention groups of the distributed attention: near-equal runs of
// columns, each owning an equal share of the KV heads and of their query
// heads (mapping/steps.cpp and mapping/grid_attention.cpp lay attention out
// over them; the QKV rows are ordered to match).
//
// With one copy of each KV head's cache (copies = 1) there are
// min(KV heads, columns) groups, each holding whole KV heads with all their
// query heads. With copies > 1 (mapping.kv_head_copies) each KV head gets
// `copies` groups side by side, each keeping a whole copy of that head's cache
// and attending with its own share of the head's query heads: the partials a
// group reduces shrink by the copies, its KV bytes do not.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace wafersim::mapping {

struct KvGroups {
  uint32_t count = 1;
  uint32_t copies = 1;             // groups per KV head (each keeps a copy of its cache)
  uint32_t heads_per_group = 1;    // KV heads of each group (the last may hold fewer)
  uint32_t queries_per_group = 1;  // query heads of each group (of its KV heads together)
  uint32_t widest = 1;             // columns of the widest group
  std::vector<uint32_t> start;     // first column of each group, then the column count
  std::vector<uint32_t> of;        // group of each column

  // `copies` must divide the query heads per KV head, and KV heads x copies
  // must not exceed the columns (kv_head_copies() gives such a count).
  KvGroups(uint32_t kv_heads, uint32_t query_heads, uint32_t columns, uint32_t kv_copies = 1)
      : copies(kv_copies), kv_heads_(kv_heads), q_per_kv_(query_heads / kv_heads) {
    count = copies > 1 ? kv_heads * copies : std::min(kv_heads, columns);
    heads_per_group = copies > 1 ? 1 : (kv_heads + count - 1) / count;
    queries_per_group = heads_per_group * (query_heads / kv_heads) / copies;
    start.resize(count + 1);
    for (uint32_t group = 0; group <= count; ++group) start[group] = uint32_t(uint64_t(group) * columns / count);
    of.resize(columns);
    for (uint32_t group = 0; group < count; ++group) {
      for (uint32_t j = start[group]; j < start[group + 1]; ++j) of[j] = group;
      widest = std::max(widest, this->columns(group));
    }
  }
  uint32_t columns(uint32_t group) const { return start[group + 1] - start[group]; }
  uint32_t kv_heads() const { return kv_heads_; }
  uint32_t query_heads() const { return kv_heads_ * q_per_kv_; }
  // The KV heads [first, last) whose cache the group holds (empty past the last head).
  std::pair<uint32_t, uint32_t> kv_head_range(uint32_t group) const {
    const uint32_t first = std::min(kv_heads_, group / copies * heads_per_group);
    return {first, std::min(kv_heads_, first + heads_per_group)};
  }
  // The query heads [first, last) the group attends with.
  std::pair<uint32_t, uint32_t> query_range(uint32_t group) const {
    const auto [first, last] = kv_head_range(group);
    if (copies == 1) return {first * q_per_kv_, last * q_per_kv_};
    const uint32_t q = first * q_per_kv_ + group % copies * queries_per_group;
    return {q, q + queries_per_group};
  }
  // The group holding the first copy of group's KV heads (itself with one copy).
  uint32_t first_copy(uint32_t group) const { return group - group % copies; }
  // Columns of all the copies of group's KV heads.
  uint32_t copy_columns(uint32_t group) const {
    const uint32_t first = first_copy(group);
    return start[first + copies] - start[first];
  }

 private:
  uint32_t kv_heads_, q_per_kv_;
};

// The copies of each KV head's cache a block of `columns` can take: the
// largest count up to `wanted` that divides the query heads per KV head and
// leaves every copy at least one column (1 when the KV heads outnumber the columns).
inline uint32_t kv_head_copies(uint32_t kv_heads, uint32_t query_heads, uint32_t columns, uint32_t wanted) {
  const uint32_t q_per_kv = query_heads / kv_heads;
  for (uint32_t copies = std::min(wanted, q_per_kv); copies > 1; --copies)
    if (q_per_kv % copies == 0 && uint64_t(kv_heads) * copies <= columns) return copies;
  return 1;
}

}  // namespace wafersim::mapping
