#include "sim/engine/validate.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/fabric.h"
#include "models/route.h"
#include "sim/engine/engine.h"

namespace wafersim::sim {

namespace {

// How far a program's messages reach from their tile, so each tile is checked
// in constant time; the exact task is looked up only when a tile fails.
struct Reach {
  int64_t min_dx = 0, max_dx = 0, min_dy = 0, max_dy = 0, min_dwafer = 0, max_dwafer = 0;
};

// Where a send's route turns, relative to its tile: a sidestep's corners may
// lie beyond both ends.
std::vector<std::pair<int64_t, int64_t>> route_corners(const Task& send) {
  std::vector<std::pair<int64_t, int64_t>> corners;
  int64_t x = 0, y = 0;
  for (const RouteLeg& leg : send_route(send).legs) {
    (leg.along_x ? x : y) += leg.length;
    corners.emplace_back(x, y);
  }
  return corners;
}

Reach reach_of(const Program& program) {
  Reach reach;
  for (const Task& task : program.tasks) {
    int64_t dx = 0, dy = 0, dwafer = 0;
    if (task.op == TaskOp::Send) {
      dx = task.dx, dy = task.dy, dwafer = task.dwafer;
      for (const auto& [corner_x, corner_y] : route_corners(task)) {
        reach.min_dx = std::min(reach.min_dx, corner_x), reach.max_dx = std::max(reach.max_dx, corner_x);
        reach.min_dy = std::min(reach.min_dy, corner_y), reach.max_dy = std::max(reach.max_dy, corner_y);
      }
    } else if (task.op == TaskOp::Multicast) {
      dx = int64_t(dir_dx(task.dir)) * task.count, dy = int64_t(dir_dy(task.dir)) * task.count;
      // The other way: as far back.
      const int64_t back_dx = -int64_t(dir_dx(task.dir)) * task.count_back,
                    back_dy = -int64_t(dir_dy(task.dir)) * task.count_back;
      reach.min_dx = std::min(reach.min_dx, back_dx), reach.max_dx = std::max(reach.max_dx, back_dx);
      reach.min_dy = std::min(reach.min_dy, back_dy), reach.max_dy = std::max(reach.max_dy, back_dy);
    } else {
      continue;
    }
    reach.min_dx = std::min(reach.min_dx, dx), reach.max_dx = std::max(reach.max_dx, dx);
    reach.min_dy = std::min(reach.min_dy, dy), reach.max_dy = std::max(reach.max_dy, dy);
    reach.min_dwafer = std::min(reach.min_dwafer, dwafer), reach.max_dwafer = std::max(reach.max_dwafer, dwafer);
  }
  return reach;
}

std::string where(const ProgramSet& set, uint64_t tile) {
  const uint64_t per_wafer = uint64_t(set.grid_width) * set.grid_height;
  return fmt::format("tile (x {}, y {}) on wafer {}", tile % set.grid_width, tile % per_wafer / set.grid_width,
                     tile / per_wafer);
}

void explain_failure(const ProgramSet& set, uint64_t tile) {
  const uint64_t per_wafer = uint64_t(set.grid_width) * set.grid_height;
  const int64_t x = int64_t(tile % set.grid_width), y = int64_t(tile % per_wafer / set.grid_width),
                wafer = int64_t(tile / per_wafer);
  const Program& program = set.programs[set.tile_program[tile]];
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    const Task& task = program.tasks[i];
    if (task.op == TaskOp::Multicast) {
      for (const auto& [dir, count] :
           {std::pair{task.dir, task.count}, std::pair{opposite(task.dir), task.count_back}}) {
        const int64_t end_x = x + int64_t(dir_dx(dir)) * count, end_y = y + int64_t(dir_dy(dir)) * count;
        if (end_x < 0 || end_y < 0 || end_x >= set.grid_width || end_y >= set.grid_height)
          throw EngineError(fmt::format("{}: task {} multicasts {} over {} tiles, past the edge of the {}x{} grid",
                                        where(set, tile), i, to_string(dir), count, set.grid_width, set.grid_height));
      }
    } else if (task.op == TaskOp::Send) {
      const int64_t to_x = x + task.dx, to_y = y + task.dy, to_wafer = wafer + task.dwafer;
      if (to_x < 0 || to_y < 0 || to_x >= set.grid_width || to_y >= set.grid_height || to_wafer < 0 ||
          to_wafer >= set.wafers)
        throw EngineError(
            fmt::format("{}: task {} sends to (x {}, y {}) on wafer {}, outside the {} wafer(s) of {}x{} tiles",
                        where(set, tile), i, to_x, to_y, to_wafer, set.wafers, set.grid_width, set.grid_height));
      for (const auto& [corner_x, corner_y] : route_corners(task))
        if (x + corner_x < 0 || y + corner_y < 0 || x + corner_x >= set.grid_width || y + corner_y >= set.grid_height)
          throw EngineError(fmt::format("{}: task {} routes through (x {}, y {}), outside the {}x{} grid",
                                        where(set, tile), i, x + corner_x, y + corner_y, set.grid_width,
                                        set.grid_height));
    }
  }
}

}  // namespace

void validate_programs(const HardwareSpec& hw, const ProgramSet& set) {
  if (set.grid_width == 0 || set.grid_height == 0 || set.wafers == 0)
    throw EngineError("the program set has an empty grid");
  if (set.grid_width != hw.grid_width || set.grid_height != hw.grid_height)
    throw EngineError(fmt::format("the program set is for a {}x{} grid but the hardware '{}' is {}x{}", set.grid_width,
                                  set.grid_height, hw.name, hw.grid_width, hw.grid_height));
  if (set.tile_program.size() != set.tiles())
    throw EngineError(
        fmt::format("the program set names programs for {} tiles but has {}", set.tile_program.size(), set.tiles()));
  if (set.tiles() >= (uint64_t(1) << 30) || set.grid_width > std::numeric_limits<uint16_t>::max())
    throw EngineError(
        fmt::format("{} tiles in rows of {} are more than the engine can index", set.tiles(), set.grid_width));
  if (set.iterations >= std::numeric_limits<uint32_t>::max())
    throw EngineError(fmt::format("{} iterations are more than the engine can count", set.iterations));
  if (!set.tile_param.empty() && set.tile_param.size() != set.tiles())
    throw EngineError(fmt::format("tile_param has {} entries for {} tiles", set.tile_param.size(), set.tiles()));

  std::vector<Reach> reaches;
  for (size_t p = 0; p < set.programs.size(); ++p) {
    reaches.push_back(reach_of(set.programs[p]));
    for (size_t i = 0; i < set.programs[p].tasks.size(); ++i) {
      const Task& task = set.programs[p].tasks[i];
      if (task.op == TaskOp::Mark && task.mark >= set.marks)
        throw EngineError(
            fmt::format("program {} task {} marks slot {} but the set has {} mark slots", p, i, task.mark, set.marks));
      const bool skip = task.op == TaskOp::SkipUnlessExpert || task.op == TaskOp::SkipIfExpert;
      const bool reads_tile_param = (task.op == TaskOp::Compute && task.kv_offset == Task::kTileParam) ||
                                    (skip && task.expert == Task::kTileParam);
      if (reads_tile_param && set.tile_param.empty())
        throw EngineError(fmt::format("program {} task {} reads a per-tile parameter but the set has none", p, i));
      if (task.stream && task.op == TaskOp::Send && task.dwafer != 0)
        throw EngineError(fmt::format("program {} task {} streams to another wafer: streams stay on one wafer", p, i));
      if (task.sidestep != 0 && (task.op != TaskOp::Send || task.dwafer != 0))
        throw EngineError(
            fmt::format("program {} task {} sidesteps but is no send on one wafer: only those have routes", p, i));
    }
  }
  const uint64_t per_wafer = uint64_t(set.grid_width) * set.grid_height;
  for (uint64_t tile = 0; tile < set.tiles(); ++tile) {
    const uint32_t program = set.tile_program[tile];
    if (program == ProgramSet::kIdle) continue;
    if (program >= set.programs.size())
      throw EngineError(
          fmt::format("{} runs program {} but the set has {}", where(set, tile), program, set.programs.size()));
    const Reach& reach = reaches[program];
    const int64_t x = int64_t(tile % set.grid_width), y = int64_t(tile % per_wafer / set.grid_width),
                  wafer = int64_t(tile / per_wafer);
    if (x + reach.min_dx < 0 || x + reach.max_dx >= set.grid_width || y + reach.min_dy < 0 ||
        y + reach.max_dy >= set.grid_height || wafer + reach.min_dwafer < 0 || wafer + reach.max_dwafer >= set.wafers)
      explain_failure(set, tile);
  }
  for (const Injection& injection : set.injections)
    if (injection.tile >= set.tiles() || set.tile_program[injection.tile] == ProgramSet::kIdle)
      throw EngineError(
          fmt::format("an injection goes to tile {}, which does not exist or runs no program", injection.tile));
}

}  // namespace wafersim::sim
