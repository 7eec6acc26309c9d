#include "workloads/prefill_inputs.h"

namespace wafersim::workloads {

uint64_t PrefillInputs::context(uint64_t iteration) const {
  const uint64_t first = order_[iteration].second * chunk_size_;
  // Token first + t attends to first + t + 1 positions; the mean over t < size.
  return first + (chunk_size_ + 1) / 2;
}

}  // namespace wafersim::workloads
