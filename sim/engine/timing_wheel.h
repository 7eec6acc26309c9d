#pragma once
// A band's event queue: a power-of-two ring of buckets for events in the
// near window [base, base + ring size) and a heap for later ones. Events at one
// cycle come out in the order they were pushed, so runs are deterministic.
// Buckets are linked lists through one node array, so memory follows the
// number of pending events, not the number of cycles that ever held events.
#include <cstdint>
#include <queue>
#include <vector>

namespace wafersim::sim {

class TimingWheel {
 public:
  static constexpr uint32_t kEnd = 0xffffffffu;

  explicit TimingWheel(uint32_t ring_bits = 12);

  void push(uint64_t time, uint32_t event) {
    if (time - base_ >= ring_size_) return push_far(time, event);
    uint32_t node = free_;
    if (node == kEnd) {
      node = new_node(event);
    } else {
      free_ = nodes_[node].next;
      nodes_[node] = {event, kEnd};
    }
    const uint64_t slot = time & mask_;
    if (head_[slot] == kEnd) {
      head_[slot] = node;
      occupied_[slot >> 6] |= uint64_t(1) << (slot & 63);
    } else {
      nodes_[tail_[slot]].next = node;
    }
    tail_[slot] = node;
  }

  // Moves the window to start at `time`, the earliest pending event (or later
  // when none is pending), and pulls far events that now fall inside it.
  void advance_to(uint64_t time);

  // Takes the events of `time` (inside the window) out of the wheel, in push
  // order; returns the first node of the list (kEnd when empty).
  uint32_t take(uint64_t time) {
    const uint64_t slot = time & mask_;
    const uint32_t first = head_[slot];
    head_[slot] = kEnd;
    occupied_[slot >> 6] &= ~(uint64_t(1) << (slot & 63));
    return first;
  }
  // Reads a taken node and recycles it: returns its event, sets *next.
  uint32_t pop_node(uint32_t node, uint32_t* next) {
    const Node taken = nodes_[node];
    nodes_[node].next = free_;
    free_ = node;
    *next = taken.next;
    return taken.event;
  }

  // The earliest pending event time; false when nothing is pending.
  bool next_time(uint64_t* time) const;

 private:
  struct Node {
    uint32_t event, next;
  };
  struct FarEvent {
    uint64_t time, sequence;
    uint32_t event;
    bool operator>(const FarEvent& other) const {
      return time != other.time ? time > other.time : sequence > other.sequence;
    }
  };

  // The rare paths of push, out of line so that the common one is a few
  // instructions wherever it is inlined.
  void push_far(uint64_t time, uint32_t event);
  uint32_t new_node(uint32_t event);

  uint64_t ring_size_, mask_;
  uint64_t base_ = 0;
  std::vector<Node> nodes_;
  uint32_t free_ = kEnd;
  std::vector<uint32_t> head_, tail_;  // per bucket
  std::vector<uint64_t> occupied_;     // one bit per bucket
  std::priority_queue<FarEvent, std::vector<FarEvent>, std::greater<FarEvent>> far_;
  uint64_t far_sequence_ = 0;
};

}  // namespace wafersim::sim
