#pragma once
// A region's event queue: a power-of-two ring of buckets for events in the
// near window [base, base + ring size) and a heap for later ones. Events at one
// cycle come out in the order they were pushed, so runs are deterministic.
#include <cstdint>
#include <queue>
#include <vector>

namespace wafersim::sim {

class TimingWheel {
 public:
  explicit TimingWheel(uint32_t ring_bits = 12);

  void push(uint64_t time, uint32_t event) {
    if (time - base_ < ring_size_) {
      const uint64_t slot = time & mask_;
      buckets_[slot].push_back(event);
      occupied_[slot >> 6] |= uint64_t(1) << (slot & 63);
    } else {
      far_.push({time, far_sequence_++, event});
    }
  }

  // Moves the window to start at `time`, the earliest pending event (or later
  // when none is pending), and pulls far events that now fall inside it.
  void advance_to(uint64_t time);
  // The bucket of `time` (inside the window); the caller drains it and then
  // calls mark_drained.
  std::vector<uint32_t>& bucket(uint64_t time) { return buckets_[time & mask_]; }
  void mark_drained(uint64_t time) { occupied_[(time & mask_) >> 6] &= ~(uint64_t(1) << (time & mask_ & 63)); }
  // The earliest pending event time; false when nothing is pending.
  bool next_time(uint64_t* time) const;

 private:
  struct FarEvent {
    uint64_t time, sequence;
    uint32_t event;
    bool operator>(const FarEvent& other) const {
      return time != other.time ? time > other.time : sequence > other.sequence;
    }
  };

  uint64_t ring_size_, mask_;
  uint64_t base_ = 0;
  std::vector<std::vector<uint32_t>> buckets_;
  std::vector<uint64_t> occupied_;  // one bit per bucket
  std::priority_queue<FarEvent, std::vector<FarEvent>, std::greater<FarEvent>> far_;
  uint64_t far_sequence_ = 0;
};

}  // namespace wafersim::sim
