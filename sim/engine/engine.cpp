#include "sim/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <systemc>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/band.h"
#include "sim/engine/validate.h"
#include "sim/engine/world.h"

namespace wafersim::sim {

namespace {

// Each band's wake-up is a timed notification in SystemC's kernel queue, so
// more bands cost more of the kernel: on the full-WSE-3 quickstart, 8 bands
// against 64 took 13 % less time for the decode and 20 % less for a 4,096-token
// prefill, and 30 MB less memory (1 to 8 bands are alike, within the noise);
// synthetic traffic is as fast or faster (multicast 48 M events/s against
// 29 M). A band count moves only same-cycle ties at shared links
// (docs/ARCHITECTURE.md, "Determinism").
constexpr uint32_t kMaxAutoBands = 8;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint32_t band_count(const World& world, const EngineOptions& options) {
  const uint32_t wanted = options.bands != 0 ? options.bands : kMaxAutoBands;
  return std::max<uint32_t>(1, std::min(wanted, world.rows));
}

// A tile still running at the end: blocked in a Wait, or never resumed.
void report_deadlock(const World& world) {
  uint64_t stuck = 0, first = 0;
  for (uint64_t tile = 0; tile < world.set.tiles(); ++tile) {
    if (world.set.tile_program[tile] == ProgramSet::kIdle || world.state[tile].iteration >= world.iterations) continue;
    if (stuck++ == 0) first = tile;
  }
  if (stuck == 0) return;
  const uint32_t row = world.place.row(uint32_t(first));
  const std::string tile_name = fmt::format("tile (x {}, y {}) on wafer {}", world.place.x(uint32_t(first)),
                                            row % world.height, row / world.height);
  const Task& task = world.program_of(uint32_t(first)).tasks[world.state[first].pc];
  if (task.op == TaskOp::Wait)
    throw EngineError(
        fmt::format("deadlock: {} tile(s) never finish; {} waits for tag {} of iteration {} and has {} of "
                    "{} messages (task {})",
                    stuck, tile_name, task.tag, world.state[first].iteration, task.count - world.state[first].pending,
                    task.count, world.state[first].pc));
  throw EngineError(fmt::format("deadlock: {} tile(s) never finish; {} stopped at task {} of iteration {}", stuck,
                                tile_name, world.state[first].pc, world.state[first].iteration));
}

void collect_busy(const World& world, EngineResult& result) {
  if (result.end_cycle == 0) return;
  const double end = double(result.end_cycle);
  double compute_sum = 0;
  uint64_t compute_peak = 0;
  for (uint64_t tile = 0; tile < world.set.tiles(); ++tile) {
    if (world.set.tile_program[tile] == ProgramSet::kIdle) continue;
    compute_sum += double(world.compute_busy[tile]);
    compute_peak = std::max(compute_peak, world.compute_busy[tile]);
  }
  if (result.tiles_active > 0) result.compute_busy_mean = compute_sum / double(result.tiles_active) / end;
  result.compute_busy_peak = double(compute_peak) / end;
  if (!world.options.contention) return;
  // Links that exist: (width - 1) per row each way in x, (height - 1) per column and wafer each way in y.
  const double links = 2.0 * world.rows * (world.width - 1) + 2.0 * world.width * world.set.wafers * (world.height - 1);
  double link_sum = 0;
  uint64_t link_peak = 0;
  for (const std::vector<LinkState>* direction : {&world.east, &world.west, &world.south, &world.north})
    for (const LinkState& link : *direction) {
      link_sum += double(link.busy_cycles);
      link_peak = std::max(link_peak, link.busy_cycles);
    }
  if (links > 0) result.link_busy_mean = link_sum / links / end;
  result.link_busy_peak = double(link_peak) / end;
}

// The per-tile and per-link counters behind the means, copied once after the
// run: the simulation itself counts them either way, so asking costs no event.
TileBusy tile_busy(const World& world) {
  TileBusy busy;
  busy.compute_cycles = world.compute_busy;
  if (!world.options.contention) return busy;
  const size_t tiles = world.compute_busy.size();
  auto by_tile = [&](const std::vector<LinkState>& links, bool column_major) {
    std::vector<uint64_t> cycles(tiles);
    for (size_t tile = 0; tile < tiles; ++tile) {
      const size_t row = tile / world.width, x = tile % world.width;
      cycles[tile] = links[column_major ? x * world.rows + row : tile].busy_cycles;
    }
    return cycles;
  };
  busy.link_cycles = {by_tile(world.east, false), by_tile(world.west, false), by_tile(world.south, true),
                      by_tile(world.north, true)};
  return busy;
}

// The band modules over the world's rows, bound to each other, with what runs at cycle 0.
template <bool kProfiled>
void elaborate_bands(World& world, uint32_t bands) {
  std::vector<Band<kProfiled>*> modules;
  world.band_of_row.resize(world.rows);
  const uint64_t width = world.width;
  for (uint32_t b = 0; b < bands; ++b) {
    const uint32_t first_row = uint32_t(uint64_t(b) * world.rows / bands);
    const uint32_t end_row = uint32_t(uint64_t(b + 1) * world.rows / bands);
    std::fill(world.band_of_row.begin() + first_row, world.band_of_row.begin() + end_row, b);
    const std::string name = fmt::format("b{}", b);
    modules.push_back(
        new Band<kProfiled>(name.c_str(), world, b, uint32_t(first_row * width), uint32_t(end_row * width)));
  }
  for (Band<kProfiled>* from : modules)
    for (Band<kProfiled>* to : modules) from->out(to->in);

  const ProgramSet& programs = world.set;
  for (uint64_t tile = 0; tile < programs.tiles(); ++tile) {
    if (programs.tile_program[tile] == ProgramSet::kIdle) continue;
    ++world.tiles_active;
    if (world.iterations > 0) modules[world.band_of(uint32_t(tile))]->start_tile(uint32_t(tile));
  }
  for (const Injection& injection : programs.injections) {
    Message message;
    message.tile = uint32_t(injection.tile);
    message.iteration = uint32_t(injection.iteration);
    message.tag = injection.tag;
    modules[world.band_of(message.tile)]->inject(message);
  }
}

}  // namespace

uint64_t max_simulated_cycles() {
  static const uint64_t cycles = UINT64_MAX / sc_core::sc_time(1, sc_core::SC_NS).value() - 1;
  return cycles;
}

uint64_t engine_state_bytes(const HardwareSpec& hw, bool contention) {
  // TileState with its path 64, compute busy 8, stream inputs 16, the
  // TileObject and its name about 250, messages in flight about 60; with
  // contention four links 64 and two ramps 16.
  const uint64_t per_tile = 64 + 8 + 16 + 250 + 60 + (contention ? 64 + 16 : 0);
  return uint64_t(hw.wafers) * hw.tiles_per_wafer() * per_tile;
}

EngineResult run_programs(const HardwareSpec& hw, const ProgramSet& programs, const IterationInputs& inputs,
                          const EngineOptions& options) {
  const auto build_start = std::chrono::steady_clock::now();
  static bool simulated = false;
  if (simulated) throw EngineError("one simulation per process: SystemC cannot elaborate a second mesh");
  validate_programs(hw, programs);  // before anything is elaborated, so a rejected set leaves the process usable
  simulated = true;

  // The world and the modules live until the process ends: tearing down
  // hundreds of thousands of sc_objects one by one would cost more than the run.
  // Only the world's flat arrays are freed after the run (World::release_tile_state).
  World* world = new World(hw, programs, inputs, options);
  const uint32_t bands = band_count(*world, options);
  std::unique_ptr<ParallelismCounter> parallelism;
  if (options.parallelism_profile) {
    parallelism = std::make_unique<ParallelismCounter>(bands, hw.fabric.hop_latency_cycles);
    world->parallelism = parallelism.get();
    elaborate_bands<true>(*world, bands);
  } else {
    elaborate_bands<false>(*world, bands);
  }

  EngineResult result;
  result.build_seconds = seconds_since(build_start);
  world->run_start = world->last_progress = std::chrono::steady_clock::now();
  sc_core::sc_start();
  result.run_seconds = seconds_since(world->run_start);

  if (world->past_time_limit)
    throw CycleLimitError(
        fmt::format("the simulation passes SystemC's time limit of {} cycles", max_simulated_cycles()));
  report_deadlock(*world);
  result.end_cycle = world->end_cycle;
  result.events = world->events;
  result.link_hops = world->link_hops;
  result.tiles_simulated = programs.tiles();
  result.tiles_active = world->tiles_active;
  result.marks = std::move(world->marks);
  collect_busy(*world, result);
  if (options.keep_tile_busy) result.tile_busy = tile_busy(*world);
  if (parallelism) {
    result.parallelism = parallelism->finish();
    result.parallelism.run_seconds = result.run_seconds;
    world->parallelism = nullptr;
  }
  world->release_tile_state();
  return result;
}

}  // namespace wafersim::sim
