#include "sim/engine/timing_wheel.h"

namespace wafersim::sim {

TimingWheel::TimingWheel(uint32_t ring_bits)
    : ring_size_(uint64_t(1) << ring_bits),
      mask_(ring_size_ - 1),
      head_(ring_size_, kEnd),
      tail_(ring_size_, kEnd),
      occupied_((ring_size_ + 63) / 64, 0) {}

void TimingWheel::push_far(uint64_t time, uint32_t event) { far_.push({time, far_sequence_++, event}); }

uint32_t TimingWheel::new_node(uint32_t event) {
  nodes_.push_back({event, kEnd});
  return uint32_t(nodes_.size() - 1);
}

void TimingWheel::advance_to(uint64_t time) {
  base_ = time;
  while (!far_.empty() && far_.top().time - base_ < ring_size_) {
    const FarEvent event = far_.top();
    far_.pop();
    push(event.time, event.event);
  }
}

bool TimingWheel::next_time(uint64_t* time) const {
  // Ring events all lie in [base, base + ring size) and precede every far event.
  const uint64_t words = occupied_.size();
  const uint64_t start = base_ & mask_;
  for (uint64_t step = 0; step <= words; ++step) {
    const uint64_t word = ((start >> 6) + step) % words;
    uint64_t bits = occupied_[word];
    if (step == 0) bits &= ~uint64_t(0) << (start & 63);
    if (step == words) bits &= (start & 63) ? ~(~uint64_t(0) << (start & 63)) : 0;
    if (bits != 0) {
      const uint64_t slot = word * 64 + uint64_t(__builtin_ctzll(bits));
      *time = base_ + ((slot - start) & mask_);
      return true;
    }
  }
  if (far_.empty()) return false;
  *time = far_.top().time;
  return true;
}

}  // namespace wafersim::sim
