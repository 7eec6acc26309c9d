#pragma once
// Per-column task lists of which most repeat: a block's parts of the MoE
// dispatch and combine (mapping.moe_combine: columns) take a few distinct
// lists over its hundreds of columns, and a model with hundreds of experts
// on many wafers has hundreds of thousands of such columns. Each distinct
// list is held once.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/tile_program.h"

namespace wafersim::mapping {

class TaskLists {
 public:
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const std::vector<Task>& operator[](size_t index) const { return distinct_[ids_[index]]; }
  // Lists at two indices are equal exactly when their ids are.
  uint32_t id(size_t index) const { return ids_[index]; }
  const std::vector<uint32_t>& ids() const { return ids_; }
  // Copies `tasks` only if no list held equals it, so a caller may build each list in one scratch vector.
  void push_back(const std::vector<Task>& tasks);
  // Storage held (0 once released).
  size_t capacity() const { return ids_.capacity() + distinct_.capacity(); }
  void release();

 private:
  std::vector<uint32_t> ids_;                                    // [index]: into distinct_
  std::vector<std::vector<Task>> distinct_;                      // each list once
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;  // a list's hash -> its ids in distinct_
};

}  // namespace wafersim::mapping
