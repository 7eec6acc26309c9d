#pragma once
// The state of every tile and link, as flat arrays indexed by tile id
// (structure of arrays: the hot loops touch only the arrays they need).
// Shared by all bands; SystemC runs one process at a time, so no locking.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "models/cost.h"
#include "models/hardware.h"
#include "models/repair_detours.h"
#include "models/route.h"
#include "models/tile_program.h"
#include "models/wafer_repairs.h"
#include "sim/engine/engine.h"

namespace wafersim::sim {

constexpr uint32_t kNoMessage = 0xffffffffu;

// A message on its way to (or parked at) a tile. Its arrival cycle is the
// cycle of its delivery event: the tail's, or for a stream (Task::stream) the head's.
struct Message {
  uint32_t tile = 0;  // destination tile id
  uint32_t iteration = 0;
  uint16_t tag = 0;
  uint32_t next = kNoMessage;  // next parked message of the same tile
  uint64_t tail = 0;           // when its last wavelet arrives
  CriticalPath path{};         // up to its arrival
};

// A multicast on its way along a row or column. It is delivered one tile at a
// time: each delivery schedules the next, so a multicast is one pending event
// however long it is. The record is shared by all bands it passes through.
struct MulticastState {
  CriticalPath path{};  // the sender's account when it sent
  uint64_t sent = 0;
  // [k - 1]: when the message passes the k-th tile's router (head + body +
  // ramp-off: nondecreasing in k), when it is delivered to the core there (later
  // when that core's ejection ramp is busy), and its contention wait.
  std::vector<uint64_t> pass, arrival, wait;
  uint32_t source = 0;
  int32_t tile_step = 0;  // tile id difference between consecutive tiles
  uint32_t count = 0, next_k = 1;
  uint32_t iteration = 0;
  uint16_t tag = 0;
  Category category = Category::Fabric;
  uint32_t next_free = kNoMessage;
};

// Per-task figures computed once per program template.
struct CompiledTask {
  int64_t id_delta = 0;         // Send: destination tile id minus source tile id
  uint64_t cycles = 0;          // Compute without per-position work: its cycles;
                                // Send / Multicast: contention-free latency (Multicast: to the first tile)
  uint64_t serialization = 0;   // Send / Multicast: cycles the body holds each link
  uint64_t combine_cycles = 0;  // a streamed Send: adding its own result into the stream
};

// The state a tile's events touch together, in one cache line: a delivery
// to a tile far in memory costs one miss, not one for the state and one for
// the critical path.
struct alignas(64) TileState {
  uint64_t now = 0;  // cycle at which the next task may start
  uint32_t pc = 0, iteration = 0;
  uint32_t pending = 0;           // messages still awaited by a blocked Wait (0: not blocked)
  uint32_t mailbox = kNoMessage;  // first parked message (index into the band's pool)
  CriticalPath path{};            // the critical-path account, cumulative
};
static_assert(sizeof(TileState) == 64, "a tile's state is one cache line");

// A tile id's row (wafer * height + y) and x, without a division on the hot
// path: tile * magic >> 63 is tile / width for every 32-bit tile id, since
// magic = 2^63 / width + 1 exceeds 2^63 / width by less than 1 and
// tile * width < 2^63 (Granlund and Montgomery, PLDI 1994).
class TilePlace {
 public:
  explicit TilePlace(uint32_t width) : width_(width), magic_((uint64_t(1) << 63) / width + 1) {}
  uint32_t row(uint32_t tile) const { return uint32_t((unsigned __int128)tile * magic_ >> 63); }
  uint32_t x(uint32_t tile) const { return tile - row(tile) * width_; }

 private:
  uint32_t width_;
  uint64_t magic_;
};

// The streams a reduction node has taken in (Task::stream).
struct StreamInputs {
  uint64_t tail = 0;           // when the last of their tails arrives (0: none)
  uint64_t ingest_cycles = 0;  // their serialisation through the core's one input ramp
};

struct LinkState {
  uint64_t busy_until = 0;
  uint64_t busy_cycles = 0;
};

// A core's ejection ramp. Messages reserve it when they are sent, at their
// arrival, so one held long at its source reserves it far ahead; a message
// arriving before that reservation may still use the idle gap in front of
// it. The gap is [until - held - gap, until - held): the ramp is idle there
// but for what was already put in it (gap shrinks from the left).
struct RampState {
  uint64_t until = 0;  // the latest reservation ends here
  uint32_t held = 0;   // ... and starts held cycles before
  uint32_t gap = 0;    // idle cycles before that start
};

struct World {
  World(const HardwareSpec& hardware, const ProgramSet& program_set, const IterationInputs& iteration_inputs,
        const EngineOptions& engine_options);

  const HardwareSpec& hw;
  const ProgramSet& set;
  const IterationInputs& inputs;
  const EngineOptions& options;
  uint32_t width, height, rows;  // rows of all wafers stacked: rows = wafers * height
  uint32_t iterations;

  std::vector<std::vector<CompiledTask>> compiled;  // [program][task]
  std::vector<uint64_t> contexts;                   // [iteration]

  TilePlace place;
  // Per tile: the hot state with its critical-path account, and the cycles
  // spent computing, each a flat array.
  std::vector<TileState> state;
  std::vector<uint64_t> compute_busy;
  // Per tile, only when a program streams: what its streamed Waits took in
  // since its last streamed Send or Compute.
  std::vector<StreamInputs> stream_inputs;

  // Directed links, contention only. East/west links are row-major
  // (row * width + x of the link's source router); south/north links
  // column-major (x * rows + row), so both legs of a route walk memory in order.
  std::vector<LinkState> east, west, south, north;
  std::vector<uint64_t> injection;  // busy_until of each core's injection ramp
  std::vector<RampState> ejection;
  std::vector<uint64_t> offwafer;  // busy_until of channel [from wafer * wafers + to wafer]

  // On repaired wafers with EngineOptions::exact_detours: each route's own
  // detour, per wafer; empty otherwise.
  std::vector<RouteDetours> route_detours;
  bool exact_detours = false;  // !route_detours.empty(), one load on the hot path

  std::vector<MulticastState> multicasts;  // records in flight, and recycled ones
  uint32_t free_multicast = kNoMessage;

  std::vector<uint32_t> band_of_row;
  ParallelismCounter* parallelism = nullptr;  // only with EngineOptions::parallelism_profile
  std::vector<std::vector<MarkRecord>> marks;

  uint64_t events = 0, link_hops = 0;
  uint64_t tiles_active = 0, tiles_finished = 0;
  uint64_t final_marks = 0;  // Mark tasks reached in the highest slot
  uint64_t end_cycle = 0;
  bool past_time_limit = false;  // an event fell beyond max_simulated_cycles() and was never run

  std::chrono::steady_clock::time_point run_start, last_progress;
  uint64_t next_progress_check = 0;  // events count at which to look at the clock again

  // Frees the per-tile and per-link arrays once the run's figures are copied
  // out (the World itself is never destroyed: see run_programs), so what the
  // caller computes next does not add to the process's peak memory on top of them.
  void release_tile_state();

  uint32_t band_of(uint32_t tile) const { return band_of_row[place.row(tile)]; }
  // Cycles a route from `source` pays around what the repair skipped: its own
  // path's with exact detours, else the table's charge for its length (the one
  // message_cycles includes).
  uint64_t route_detour_cycles(uint32_t source, const Task& send) const {
    return exact_detours ? exact_route_detour_cycles(source, send_route(send))
                         : detour_cycles(hw.fabric, route_hops(send));
  }
  // The same for the k-th tile of a multicast from `source` towards `dir`.
  uint64_t multicast_detour_cycles(uint32_t source, Dir dir, uint32_t k) const {
    return exact_detours ? exact_multicast_detour_cycles(source, dir, k) : detour_cycles(hw.fabric, k);
  }
  // Contention off: a message's latency from `source`, compiled with the
  // table's detour, or with exact detours its own route's.
  uint64_t free_latency(uint32_t source, const Task& task, const CompiledTask& compiled) const {
    return exact_detours ? exact_latency(source, task, compiled) : compiled.cycles;
  }
  uint64_t exact_latency(uint32_t source, const Task& task, const CompiledTask& compiled) const;
  uint64_t exact_route_detour_cycles(uint32_t source, const SendRoute& route) const;
  uint64_t exact_multicast_detour_cycles(uint32_t source, Dir dir, uint32_t k) const;
  const Program& program_of(uint32_t tile) const { return set.programs[set.tile_program[tile]]; }
};

}  // namespace wafersim::sim
