#pragma once
// Small helpers to write tile programs in tests: short positional forms of the
// builders in models/task_builders.h, for tests that write many tasks.
#include <cstdint>
#include <vector>

#include "models/task_builders.h"
#include "models/tile_program.h"

namespace wafersim::testing {

inline Task compute(const Work& work, Dtype dtype = Dtype::FP16, Category category = Category::Compute) {
  return ComputeTask().work(work).dtype(dtype).category(category);
}

inline Task send(int32_t dx, int32_t dy, uint32_t bytes, uint16_t tag = 0, int32_t dwafer = 0, uint32_t relays = 0) {
  return SendTask().dx(dx).dy(dy).dwafer(dwafer).bytes(bytes).tag(tag).relays(relays);
}

inline Task multicast(Dir dir, uint32_t count, uint32_t bytes, uint16_t tag = 0) {
  return MulticastTask().dir(dir).tiles(count).bytes(bytes).tag(tag);
}

inline Task wait(uint32_t count, uint16_t tag = 0) { return WaitTask().tag(tag).messages(count); }

inline Task mark(uint32_t slot) { return MarkTask().slot(slot); }

// An empty program set: every tile idle, one iteration.
inline ProgramSet empty_set(uint32_t width, uint32_t height, uint32_t wafers = 1) {
  ProgramSet set;
  set.wafers = wafers;
  set.grid_width = width;
  set.grid_height = height;
  set.tile_program.assign(set.tiles(), ProgramSet::kIdle);
  set.iterations = 1;
  return set;
}

// Gives tile (x, y) on `wafer` its own program; returns the program index.
inline uint32_t place(ProgramSet& set, uint32_t x, uint32_t y, std::vector<Task> tasks, uint32_t wafer = 0) {
  set.programs.push_back({std::move(tasks)});
  const uint32_t index = uint32_t(set.programs.size() - 1);
  set.tile_program[(uint64_t(wafer) * set.grid_height + y) * set.grid_width + x] = index;
  return index;
}

}  // namespace wafersim::testing
