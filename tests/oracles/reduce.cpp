#include "tests/oracles/reduce.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace wafersim::oracles {

namespace {
uint64_t combine_cycles(const HardwareSpec& hw, const ReduceParams& reduce, uint64_t vectors) {
  return compute_cycles(hw.tile, reduce.dtype, reduce.combine * vectors);
}

uint64_t stride_of(uint32_t level, uint32_t fan_in) {
  uint64_t stride = 1;
  for (uint32_t l = 0; l < level; ++l) stride *= fan_in;
  return stride;
}

void check_fan_in(uint32_t fan_in) {
  if (fan_in < 2) throw std::invalid_argument("tree reduce needs a fan-in of at least 2");
}
}  // namespace

uint64_t chain_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce) {
  if (reduce.tiles < 2) return 0;
  return uint64_t(reduce.tiles - 1) *
         (message_cycles(hw.fabric, 1, 0, 0, reduce.bytes) + combine_cycles(hw, reduce, 1));
}

uint32_t tree_levels(uint32_t tiles, uint32_t fan_in) {
  check_fan_in(fan_in);
  uint32_t levels = 0;
  for (uint64_t span = 1; span < tiles; span *= fan_in) ++levels;
  return levels;
}

uint32_t tree_receive_count(uint32_t index, uint32_t level, uint32_t tiles, uint32_t fan_in) {
  const uint64_t stride = stride_of(level, fan_in);
  if (index % (stride * fan_in) != 0) return 0;
  uint32_t count = 0;
  for (uint32_t j = 1; j < fan_in && index + j * stride < tiles; ++j) ++count;
  return count;
}

uint32_t tree_send_hops(uint32_t index, uint32_t level, uint32_t fan_in) {
  const uint64_t stride = stride_of(level, fan_in);
  if (index % stride != 0) return 0;
  return uint32_t((index / stride) % fan_in * stride);
}

uint64_t tree_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce, uint32_t fan_in) {
  const uint32_t levels = tree_levels(reduce.tiles, fan_in);
  std::vector<uint64_t> ready(reduce.tiles, 0);
  for (uint32_t level = 0; level < levels; ++level) {
    const uint64_t stride = stride_of(level, fan_in);
    for (uint64_t root = 0; root < reduce.tiles; root += stride * fan_in) {
      const uint32_t count = tree_receive_count(uint32_t(root), level, reduce.tiles, fan_in);
      if (count == 0) continue;
      uint64_t last_arrival = 0;
      for (uint32_t j = 1; j <= count; ++j)
        last_arrival = std::max(last_arrival, ready[root + j * stride] +
                                                  message_cycles(hw.fabric, uint32_t(j * stride), 0, 0, reduce.bytes));
      ready[root] = std::max(ready[root], last_arrival) + combine_cycles(hw, reduce, count);
    }
  }
  return reduce.tiles == 0 ? 0 : ready[0];
}

uint64_t full_tree_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce, uint32_t fan_in) {
  const uint32_t levels = tree_levels(reduce.tiles, fan_in);
  if (stride_of(levels, fan_in) != reduce.tiles)
    throw std::invalid_argument("the closed form of a full tree needs tiles = fan_in^levels");
  uint64_t cycles = 0;
  for (uint32_t level = 0; level < levels; ++level)
    cycles += message_cycles(hw.fabric, uint32_t((fan_in - 1) * stride_of(level, fan_in)), 0, 0, reduce.bytes) +
              combine_cycles(hw, reduce, fan_in - 1);
  return cycles;
}

double hpdc24_reduce_cycles(const Hpdc24Reduce& r) {
  return std::max(r.contention_cycles, r.element_hops / r.links + r.distance_hops) + (2 * r.ramp_cycles + 1) * r.depth;
}

}  // namespace wafersim::oracles
