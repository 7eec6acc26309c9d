#pragma once
// The SystemC mesh engine: runs a ProgramSet on every tile of the wafer(s).
// One simulation per process: SystemC elaborates once, so run_programs may be
// called only once in a process (a second call throws EngineError).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "models/cycle_limit.h"
#include "models/hardware.h"
#include "models/tile_program.h"
#include "sim/engine/parallelism_profile.h"

namespace wafersim::sim {

// Reported every progress_seconds of wall time while the simulation runs.
struct EngineProgress {
  uint64_t cycle = 0;   // simulated cycle reached
  uint64_t events = 0;  // events processed so far
  uint64_t tiles_finished = 0;
  uint64_t final_marks = 0;  // Mark tasks reached in the highest slot (a decode: tokens done)
  uint64_t tiles_active = 0;
  double seconds = 0;  // wall time since the run started
};

struct EngineOptions {
  bool contention = true;      // links serialise messages; off = closed-form timing
  bool exact_detours = false;  // on a repaired wafer, each route's own detour (RouteDetours), not the table's
  uint32_t bands = 0;          // SystemC band modules; 0 = chosen from the grid
  std::function<void(const EngineProgress&)> progress;
  double progress_seconds = 2.0;
  bool keep_tile_busy = false;  // fill EngineResult::tile_busy (heatmaps); off, the run keeps only means and peaks
  // Fill EngineResult::parallelism: times every band's wake-up (`wafersim bench parallelism`).
  bool parallelism_profile = false;
};

// Busy cycles of every tile and every directed link, in tile id order
// ((wafer * height + y) * width + x). A link is indexed by its source router;
// links off the grid's edge stay 0.
struct TileBusy {
  std::vector<uint64_t> compute_cycles;
  std::array<std::vector<uint64_t>, 4> link_cycles;  // east, west, south, north; empty without contention
};

// Where a tile reached a Mark: the cycle and its critical-path breakdown.
struct MarkRecord {
  uint64_t cycle = 0;
  CriticalPath path{};
};

struct EngineResult {
  uint64_t end_cycle = 0;  // the last tile finishes its last iteration
  uint64_t events = 0;     // tasks processed + message deliveries
  uint64_t link_hops = 0;  // directed links crossed by messages
  uint64_t tiles_simulated = 0;
  uint64_t tiles_active = 0;
  // [slot][iteration]; when several tiles mark one slot in one iteration the
  // latest cycle is kept (a slot marked by a whole layer records its end).
  std::vector<std::vector<MarkRecord>> marks;
  double compute_busy_mean = 0, compute_busy_peak = 0;  // fraction of end_cycle, over active tiles
  double link_busy_mean = 0, link_busy_peak = 0;        // fraction of end_cycle, over all links (contention on)
  double build_seconds = 0, run_seconds = 0;
  TileBusy tile_busy;              // only with EngineOptions::keep_tile_busy
  ParallelismProfile parallelism;  // only with EngineOptions::parallelism_profile
};

// A ProgramSet the engine cannot run (a route off the grid, a deadlock, a second
// simulation in one process): a bug in whoever built the programs.
class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The last cycle SystemC can reach (its 64-bit time at the engine's 1 ns per
// cycle, about 1.8e16 cycles). A run that would pass it stops with CycleLimitError.
uint64_t max_simulated_cycles();

// What the engine's per-tile state takes for every tile of hw's wafers
// (docs/ARCHITECTURE.md, "Memory layout"), the plan's programs not included:
// what `run` checks against the memory the process can still take.
uint64_t engine_state_bytes(const HardwareSpec& hw, bool contention);

EngineResult run_programs(const HardwareSpec& hw, const ProgramSet& programs, const IterationInputs& inputs,
                          const EngineOptions& options);

}  // namespace wafersim::sim
