#include "sim/engine/world.h"

#include <cstdlib>
#include <initializer_list>

#include "models/cost.h"

namespace wafersim::sim {

namespace {
constexpr uint64_t kDynamicCycles = UINT64_MAX;

CompiledTask compile_task(const HardwareSpec& hw, const Task& task) {
  CompiledTask compiled;
  compiled.serialization = serialization_cycles(hw.fabric, task.bytes);
  compiled.id_delta = (int64_t(task.dwafer) * hw.grid_height + task.dy) * int64_t(hw.grid_width) + task.dx;
  switch (task.op) {
    case TaskOp::Compute: {
      const Work& per_position = task.work_per_position;
      const bool grows = per_position.flops || per_position.read_bytes || per_position.write_bytes;
      compiled.cycles = grows ? kDynamicCycles : compute_cycles(hw.tile, task.dtype, task.work);
      break;
    }
    case TaskOp::Send: {
      compiled.cycles =
          task.dwafer != 0 ? offwafer_message_cycles(hw, task.bytes) : route_message_cycles(hw.fabric, task);
      if (task.stream && !(task.work == Work{}))
        compiled.combine_cycles = compute_cycles(hw.tile, task.dtype, task.work);
      break;
    }
    case TaskOp::Multicast: compiled.cycles = message_cycles(hw.fabric, 1, 0, task.relays, task.bytes); break;
    default: break;
  }
  return compiled;
}
}  // namespace

World::World(const HardwareSpec& hardware, const ProgramSet& program_set, const IterationInputs& iteration_inputs,
             const EngineOptions& engine_options)
    : hw(hardware),
      set(program_set),
      inputs(iteration_inputs),
      options(engine_options),
      width(program_set.grid_width),
      height(program_set.grid_height),
      rows(program_set.wafers * program_set.grid_height),
      iterations(uint32_t(program_set.iterations)),
      place(program_set.grid_width) {
  compiled.reserve(set.programs.size());
  for (const Program& program : set.programs) {
    compiled.emplace_back();
    compiled.back().reserve(program.tasks.size());  // exactly: a full-wafer plan has hundreds of thousands of tasks
    for (const Task& task : program.tasks) compiled.back().push_back(compile_task(hw, task));
  }
  for (uint64_t n = 0; n < iterations; ++n) contexts.push_back(inputs.context(n));

  const size_t tiles = size_t(set.tiles());
  state.resize(tiles);
  compute_busy.assign(tiles, 0);
  bool streams = false;
  for (const Program& program : set.programs)
    for (const Task& task : program.tasks) streams = streams || task.stream;
  if (streams) stream_inputs.assign(tiles, StreamInputs{});
  if (options.contention) {
    east.assign(tiles, LinkState{});
    west.assign(tiles, LinkState{});
    south.assign(tiles, LinkState{});
    north.assign(tiles, LinkState{});
    injection.assign(tiles, 0);
    ejection.assign(tiles, RampState{});
    offwafer.assign(size_t(set.wafers) * set.wafers, 0);
  }
  marks.assign(set.marks, std::vector<MarkRecord>(iterations));
  if (options.exact_detours && hw.repairs)
    for (uint32_t wafer = 0; wafer < set.wafers; ++wafer) route_detours.emplace_back(hw.repairs->wafer(wafer));
  exact_detours = !route_detours.empty();
}

uint64_t World::exact_route_detour_cycles(uint32_t source, const SendRoute& route) const {
  const uint32_t row = place.row(source);
  const RouteDetours& detours = route_detours[row / height];
  return uint64_t(detours.route(place.x(source), row % height, route)) * hw.fabric.hop_latency_cycles;
}

uint64_t World::exact_latency(uint32_t source, const Task& task, const CompiledTask& compiled) const {
  return compiled.cycles - detour_cycles(hw.fabric, route_hops(task)) +
         exact_route_detour_cycles(source, send_route(task));
}

uint64_t World::exact_multicast_detour_cycles(uint32_t source, Dir dir, uint32_t k) const {
  const uint32_t row = place.row(source), x = place.x(source);
  const RouteDetours& detours = route_detours[row / height];
  const uint32_t y = row % height;
  uint32_t extra = 0;
  switch (dir) {
    case Dir::East: extra = detours.along_row(y, x, x + k); break;
    case Dir::West: extra = detours.along_row(y, x, x - k); break;
    case Dir::South: extra = detours.down_column(x, y, y + k); break;
    case Dir::North: extra = detours.down_column(x, y, y - k); break;
  }
  return uint64_t(extra) * hw.fabric.hop_latency_cycles;
}

void World::release_tile_state() {
  // Swapping with empty vectors frees their storage (clear() would keep it).
  std::vector<TileState>().swap(state);
  std::vector<uint64_t>().swap(compute_busy);
  std::vector<StreamInputs>().swap(stream_inputs);
  for (std::vector<LinkState>* links : {&east, &west, &south, &north}) std::vector<LinkState>().swap(*links);
  std::vector<uint64_t>().swap(injection);
  std::vector<RampState>().swap(ejection);
  std::vector<MulticastState>().swap(multicasts);
}

}  // namespace wafersim::sim
