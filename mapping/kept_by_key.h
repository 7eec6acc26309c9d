#pragma once
// Values kept by a nonzero 64-bit key, at most `bound` of them (reaching it
// drops them all: what is dropped is timed again), in one flat table probed
// linearly: a lookup the closed form makes a few times per layer and token,
// where std::unordered_map's division and chained nodes cost more than the
// figures it holds.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wafersim::mapping {

template <class Value>
class KeptByKey {
 public:
  explicit KeptByKey(size_t bound) : bound_(bound) {}

  // The value kept under `key`, or null.
  Value* find(uint64_t key) {
    if (keys_.empty()) return nullptr;
    for (size_t slot = home(key);; slot = (slot + 1) & mask()) {
      if (keys_[slot] == key) return &values_[index_[slot]];
      if (keys_[slot] == 0) return nullptr;
    }
  }
  // A new value under `key` (not kept yet), valid until the next insert.
  Value& insert(uint64_t key) {
    if (values_.size() >= bound_) {
      keys_.assign(keys_.size(), 0);
      values_.clear();
    }
    if (2 * (values_.size() + 1) > keys_.size()) grow();
    place(key, uint32_t(values_.size()));
    return values_.emplace_back();
  }

 private:
  size_t mask() const { return keys_.size() - 1; }
  // Fibonacci hashing: the key's high bits after a multiply, a power-of-two table.
  size_t home(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void place(uint64_t key, uint32_t index) {
    size_t slot = home(key);
    while (keys_[slot] != 0) slot = (slot + 1) & mask();
    keys_[slot] = key;
    index_[slot] = index;
  }
  void grow() {
    const std::vector<uint64_t> keys = std::move(keys_);
    const std::vector<uint32_t> index = std::move(index_);
    const size_t size = keys.empty() ? 16 : 2 * keys.size();
    keys_.assign(size, 0);
    index_.assign(size, 0);
    shift_ = 64;
    for (size_t s = size; s > 1; s >>= 1) --shift_;
    for (size_t slot = 0; slot < keys.size(); ++slot)
      if (keys[slot] != 0) place(keys[slot], index[slot]);
  }

  size_t bound_;
  unsigned shift_ = 64;
  std::vector<uint64_t> keys_;   // per slot, 0 for an empty one
  std::vector<uint32_t> index_;  // per slot: its value's
  std::vector<Value> values_;    // in the order they were kept
};

}  // namespace wafersim::mapping
