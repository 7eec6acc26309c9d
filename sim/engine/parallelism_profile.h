#pragma once
// How much of a run a parallel engine could overlap, measured on the run
// itself (EngineOptions::parallelism_profile). A parallel engine would give
// each thread a set of tiles and synchronise every window of the least cycles
// a message takes from one thread's tiles to another's (the hop latency), so
// within a window each thread runs alone. The run is profiled as the serial
// engine runs it: per window, each band's events and wall time, and each
// event's tile; a split over T threads costs, per window, its busiest
// thread's share.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::sim {

// How tiles are shared among threads.
enum class Partition {
  Bands,               // contiguous groups of the engine's bands (band b in group b * threads / bands)
  RowsInterleaved,     // row r in thread r mod threads
  ColumnsInterleaved,  // column x in thread x mod threads
};
const char* partition_name(Partition partition);

struct ParallelismSplit {
  Partition partition = Partition::Bands;
  uint32_t threads = 1;
  uint64_t critical_events = 0;        // sum over windows of the busiest thread's events
  double critical_seconds = 0;         // the same in wall time spent in wake-ups (bands only: others are not timed)
  uint64_t cross_thread_messages = 0;  // deliveries and multicast steps from one thread's tiles to another's
};

struct ParallelismProfile {
  uint64_t window_cycles = 0;  // the least cycles between a send on one tile and its effect on another
  // Measured: the least cycles any message took from one tile to another. A
  // parallel engine's windows are sound only if it is at least window_cycles.
  uint64_t least_message_cycles = UINT64_MAX;
  uint64_t windows = 0;  // windows holding at least one event: the barriers a parallel engine would pass
  uint64_t events = 0;
  double run_seconds = 0;   // wall time of the whole simulation (EngineResult::run_seconds)
  double wake_seconds = 0;  // wall time inside the bands' wake-ups (the rest is SystemC's scheduler)
  std::vector<uint64_t> band_events;
  std::vector<ParallelismSplit> splits;  // per partition: 1, 2, 4, ... threads
};

// Collects the profile while the serial engine runs. Bands report their events
// and wake-ups in simulated-time order, which SystemC keeps across bands.
class ParallelismCounter {
 public:
  // Interleaved partitions are measured up to this many threads.
  static constexpr uint32_t kMaxInterleave = 16;

  ParallelismCounter(uint32_t bands, uint64_t window_cycles);

  // `events` were processed for the tile at (row, x) of band `band`.
  void events(uint32_t band, uint32_t row, uint32_t x, uint64_t cycle, uint64_t events);
  // A band's wake-up took `seconds` of wall time (its events are reported before).
  void wake(uint32_t band, uint64_t cycle, double seconds);
  // A message from the tile at (from_row, from_x) of band `from_band` to the one at
  // (to_row, to_x) of `to_band`, arriving `latency_cycles` after the cycle that sent it.
  void message(uint32_t from_band, uint32_t to_band, uint32_t from_row, uint32_t from_x, uint32_t to_row, uint32_t to_x,
               uint64_t latency_cycles);
  ParallelismProfile finish();

 private:
  void enter_window(uint64_t cycle);
  void close_window();

  uint32_t bands_;
  ParallelismProfile profile_;
  uint64_t window_ = UINT64_MAX;
  // This window's events and wake-up time per band, and events per row and column residue.
  std::vector<uint64_t> band_window_events_;
  std::vector<double> band_window_seconds_;
  uint64_t row_window_events_[kMaxInterleave] = {};
  uint64_t column_window_events_[kMaxInterleave] = {};
  std::vector<uint64_t> band_pairs_;  // [from * bands + to]: messages between bands
  // [from residue * kMaxInterleave + to residue]: messages between rows, and columns, by residue.
  uint64_t row_pairs_[kMaxInterleave * kMaxInterleave] = {};
  uint64_t column_pairs_[kMaxInterleave * kMaxInterleave] = {};
};

// Wall time for `threads` threads, spinning, to pass one barrier together: what
// a parallel engine pays per window, measured here over `rounds` barriers.
double barrier_seconds(uint32_t threads, uint64_t rounds);
// Wall time per message for two threads to hand each other `batch` messages a
// window (each writes its batch, then reads the other's), barriers left out.
double handoff_seconds(uint32_t batch, uint64_t rounds);

}  // namespace wafersim::sim
