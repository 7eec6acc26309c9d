#include "sim/engine/parallelism_profile.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace wafersim::sim {

namespace {

// The busiest of `threads` groups of `counts`, where element i belongs to group_of(i).
template <typename T, typename GroupOf>
T busiest(const T* counts, uint32_t size, uint32_t threads, GroupOf group_of) {
  T groups[ParallelismCounter::kMaxInterleave] = {};
  std::vector<T> many;
  T* sums = groups;
  if (threads > ParallelismCounter::kMaxInterleave) {
    many.assign(threads, T{});
    sums = many.data();
  }
  for (uint32_t i = 0; i < size; ++i) sums[group_of(i)] += counts[i];
  return *std::max_element(sums, sums + threads);
}

}  // namespace

const char* partition_name(Partition partition) {
  switch (partition) {
    case Partition::Bands: return "bands";
    case Partition::RowsInterleaved: return "rows interleaved";
    case Partition::ColumnsInterleaved: return "columns interleaved";
  }
  return "?";
}

ParallelismCounter::ParallelismCounter(uint32_t bands, uint64_t window_cycles)
    : bands_(bands), band_window_events_(bands), band_window_seconds_(bands), band_pairs_(size_t(bands) * bands) {
  profile_.window_cycles = std::max<uint64_t>(window_cycles, 1);
  profile_.band_events.assign(bands, 0);
  for (uint32_t threads = 1; threads <= bands; threads *= 2) profile_.splits.push_back({Partition::Bands, threads});
  for (Partition partition : {Partition::RowsInterleaved, Partition::ColumnsInterleaved})
    for (uint32_t threads = 2; threads <= kMaxInterleave; threads *= 2) profile_.splits.push_back({partition, threads});
}

void ParallelismCounter::enter_window(uint64_t cycle) {
  const uint64_t window = cycle / profile_.window_cycles;
  if (window == window_) return;
  close_window();
  window_ = window;
}

void ParallelismCounter::events(uint32_t band, uint32_t row, uint32_t x, uint64_t cycle, uint64_t events) {
  enter_window(cycle);
  band_window_events_[band] += events;
  row_window_events_[row % kMaxInterleave] += events;
  column_window_events_[x % kMaxInterleave] += events;
}

void ParallelismCounter::wake(uint32_t band, uint64_t cycle, double seconds) {
  enter_window(cycle);
  band_window_seconds_[band] += seconds;
}

void ParallelismCounter::message(uint32_t from_band, uint32_t to_band, uint32_t from_row, uint32_t from_x,
                                 uint32_t to_row, uint32_t to_x, uint64_t latency_cycles) {
  profile_.least_message_cycles = std::min(profile_.least_message_cycles, latency_cycles);
  ++band_pairs_[size_t(from_band) * bands_ + to_band];
  ++row_pairs_[(from_row % kMaxInterleave) * kMaxInterleave + to_row % kMaxInterleave];
  ++column_pairs_[(from_x % kMaxInterleave) * kMaxInterleave + to_x % kMaxInterleave];
}

void ParallelismCounter::close_window() {
  if (window_ == UINT64_MAX) return;
  uint64_t window_events = 0;
  for (uint32_t band = 0; band < bands_; ++band) {
    window_events += band_window_events_[band];
    profile_.band_events[band] += band_window_events_[band];
    profile_.wake_seconds += band_window_seconds_[band];
  }
  if (window_events > 0) ++profile_.windows;
  profile_.events += window_events;
  for (ParallelismSplit& split : profile_.splits) {
    const uint32_t threads = split.threads;
    switch (split.partition) {
      case Partition::Bands: {
        auto group = [&](uint32_t band) { return uint32_t(uint64_t(band) * threads / bands_); };
        split.critical_events += busiest(band_window_events_.data(), bands_, threads, group);
        split.critical_seconds += busiest(band_window_seconds_.data(), bands_, threads, group);
        break;
      }
      case Partition::RowsInterleaved:
      case Partition::ColumnsInterleaved: {
        const uint64_t* counts =
            split.partition == Partition::RowsInterleaved ? row_window_events_ : column_window_events_;
        split.critical_events += busiest(counts, kMaxInterleave, threads, [&](uint32_t r) { return r % threads; });
        break;
      }
    }
  }
  std::fill(band_window_events_.begin(), band_window_events_.end(), 0);
  std::fill(band_window_seconds_.begin(), band_window_seconds_.end(), 0.0);
  std::fill(std::begin(row_window_events_), std::end(row_window_events_), 0);
  std::fill(std::begin(column_window_events_), std::end(column_window_events_), 0);
}

ParallelismProfile ParallelismCounter::finish() {
  close_window();
  window_ = UINT64_MAX;
  for (ParallelismSplit& split : profile_.splits) {
    const uint32_t threads = split.threads;
    split.cross_thread_messages = 0;
    if (split.partition == Partition::Bands) {
      for (uint32_t from = 0; from < bands_; ++from)
        for (uint32_t to = 0; to < bands_; ++to)
          if (uint64_t(from) * threads / bands_ != uint64_t(to) * threads / bands_)
            split.cross_thread_messages += band_pairs_[size_t(from) * bands_ + to];
      continue;
    }
    const uint64_t* pairs = split.partition == Partition::RowsInterleaved ? row_pairs_ : column_pairs_;
    for (uint32_t from = 0; from < kMaxInterleave; ++from)
      for (uint32_t to = 0; to < kMaxInterleave; ++to)
        if (from % threads != to % threads) split.cross_thread_messages += pairs[from * kMaxInterleave + to];
  }
  return profile_;
}

namespace {

// Threads spinning until all have arrived: what a window's end costs a parallel engine.
class SpinBarrier {
 public:
  static constexpr uint32_t kSpinsBeforeYield = 4096;
  explicit SpinBarrier(uint32_t threads) : threads_(threads) {}
  // Each thread's round-th call returns once every thread has made its round-th call.
  void pass(uint64_t round) {
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      passed_.store(round, std::memory_order_release);
      return;
    }
    // Spinning is what a parallel engine would do; yielding after a while
    // keeps a loaded machine (more threads than free cores) from stalling.
    for (uint32_t spins = 0; passed_.load(std::memory_order_acquire) < round; ++spins) {
      if (spins >= kSpinsBeforeYield) {
        std::this_thread::yield();
        continue;
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

 private:
  const uint32_t threads_;
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint64_t> passed_{0};  // barriers every thread has passed
};

// Runs body(thread, round) on `threads` threads for `rounds` rounds; returns the wall time per round.
template <typename Body>
double timed_rounds(uint32_t threads, uint64_t rounds, Body body) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> others;
  for (uint32_t t = 1; t < threads; ++t)
    others.emplace_back([&, t] {
      for (uint64_t round = 1; round <= rounds; ++round) body(t, round);
    });
  for (uint64_t round = 1; round <= rounds; ++round) body(0, round);
  for (std::thread& other : others) other.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / double(rounds);
}

}  // namespace

double barrier_seconds(uint32_t threads, uint64_t rounds) {
  if (threads < 2 || rounds == 0) return 0;
  SpinBarrier barrier(threads);
  return timed_rounds(threads, rounds, [&](uint32_t, uint64_t round) { barrier.pass(round); });
}

double handoff_seconds(uint32_t batch, uint64_t rounds) {
  if (batch == 0 || rounds == 0) return 0;
  // A message record as the engine's (a tile, its tag and iteration, a tail and a critical-path account).
  struct Record {
    uint64_t words[8];
  };
  std::vector<Record> outbox[2] = {std::vector<Record>(batch), std::vector<Record>(batch)};
  std::atomic<uint64_t> checksum{0};
  SpinBarrier barrier(2);
  const double round = timed_rounds(2, rounds, [&](uint32_t t, uint64_t r) {
    for (uint32_t i = 0; i < batch; ++i) outbox[t][i].words[0] = outbox[t][i].words[7] = r + i;
    barrier.pass(2 * r - 1);
    uint64_t sum = 0;
    for (const Record& record : outbox[1 - t]) sum += record.words[0] + record.words[7];
    checksum.fetch_add(sum, std::memory_order_relaxed);
    barrier.pass(2 * r);
  });
  const double barriers = 2 * barrier_seconds(2, rounds);
  return std::max(0.0, round - barriers) / double(batch);
}

}  // namespace wafersim::sim
