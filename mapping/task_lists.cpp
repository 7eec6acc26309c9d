#include "mapping/task_lists.h"

#include "models/field_list.h"

namespace wafersim::mapping {

void TaskLists::push_back(const std::vector<Task>& tasks) {
  // Neighbouring columns mostly take the same list: compared first, it needs no hash.
  if (!ids_.empty() && distinct_[ids_.back()] == tasks) {
    ids_.push_back(ids_.back());
    return;
  }
  uint64_t hash = kFieldHashSeed;
  for (const Task& t : tasks) hash = hash_fields(hash, t);
  std::vector<uint32_t>& same_hash = by_hash_[hash];
  for (uint32_t id : same_hash)
    if (distinct_[id] == tasks) {
      ids_.push_back(id);
      return;
    }
  same_hash.push_back(uint32_t(distinct_.size()));
  ids_.push_back(same_hash.back());
  distinct_.push_back(tasks);
}

void TaskLists::release() {
  // Swapping with empty containers frees their storage (clear() would keep it).
  std::vector<uint32_t>().swap(ids_);
  std::vector<std::vector<Task>>().swap(distinct_);
  std::unordered_map<uint64_t, std::vector<uint32_t>>().swap(by_hash_);
}

}  // namespace wafersim::mapping
