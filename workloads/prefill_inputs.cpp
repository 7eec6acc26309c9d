#include "workloads/prefill_inputs.h"

namespace wafersim::workloads {

uint64_t PrefillInputs::context(uint64_t iteration) const {
  const uint64_t size = workload_.prefill_chunk_size(), first = iteration / workload_.batch * size;
  // Token first + t attends to first + t + 1 positions; the mean over t < size.
  return first + (size + 1) / 2;
}

}  // namespace wafersim::workloads
