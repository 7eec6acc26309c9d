#pragma once
// Small helpers to write tile programs in tests.
#include <cstdint>
#include <vector>

#include "models/tile_program.h"

namespace wafersim::testing {

inline Task compute(const Work& work, Dtype dtype = Dtype::FP16, Category category = Category::Compute) {
  Task task;
  task.op = Op::Compute;
  task.work = work;
  task.dtype = dtype;
  task.category = category;
  return task;
}

inline Task send(int32_t dx, int32_t dy, uint32_t bytes, uint16_t tag = 0, int32_t dwafer = 0,
                 uint32_t relays = 0) {
  Task task;
  task.op = Op::Send;
  task.category = Category::Fabric;
  task.dx = dx, task.dy = dy, task.dwafer = dwafer, task.bytes = bytes, task.tag = tag, task.relays = relays;
  return task;
}

inline Task multicast(Dir dir, uint32_t count, uint32_t bytes, uint16_t tag = 0) {
  Task task;
  task.op = Op::Multicast;
  task.category = Category::Fabric;
  task.dir = dir, task.count = count, task.bytes = bytes, task.tag = tag;
  return task;
}

inline Task wait(uint32_t count, uint16_t tag = 0) {
  Task task;
  task.op = Op::Wait;
  task.count = count, task.tag = tag;
  return task;
}

inline Task mark(uint32_t slot) {
  Task task;
  task.op = Op::Mark;
  task.mark = slot;
  return task;
}

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
