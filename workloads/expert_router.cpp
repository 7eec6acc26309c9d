// ExpertRouter: the choice depends only on (seed, sequence, token, layer), through
// splitmix64_hash, integer arithmetic only, so every platform routes alike.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/splitmix.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

namespace {

constexpr uint32_t kMaxTopK = 64;  // matches the range of model.moe.top_k

}  // namespace

ExpertRouter::ExpertRouter(uint64_t seed, uint32_t n_experts, uint32_t top_k)
    : seed_(seed), n_experts_(n_experts), top_k_(top_k) {
  if (top_k > n_experts || top_k > kMaxTopK)
    throw std::logic_error("ExpertRouter: top_k " + std::to_string(top_k) + " with " + std::to_string(n_experts) +
                           " experts");
}

void ExpertRouter::route(uint64_t sequence, uint64_t token, uint32_t moe_layer, uint32_t* out) const {
  uint64_t state = splitmix64_hash(seed_);
  state = splitmix64_hash(state ^ sequence);
  state = splitmix64_hash(state ^ token);
  state = splitmix64_hash(state ^ moe_layer);

  // Partial Fisher-Yates over the identity permutation 0..n-1, kept sparse: only
  // positions that received a displaced value are stored (at most top_k of them).
  std::pair<uint32_t, uint32_t> displaced[kMaxTopK];
  uint32_t n_displaced = 0;
  auto value_at = [&](uint32_t position) {
    for (uint32_t i = 0; i < n_displaced; ++i)
      if (displaced[i].first == position) return displaced[i].second;
    return position;
  };
  for (uint32_t i = 0; i < top_k_; ++i) {
    state = splitmix64_hash(state);
    const uint32_t j = i + uint32_t(state % (n_experts_ - i));
    const uint32_t value_i = value_at(i);
    out[i] = value_at(j);
    // Position i is never read again; position j now holds what was at i.
    bool updated = false;
    for (uint32_t d = 0; d < n_displaced; ++d)
      if (displaced[d].first == j) {
        displaced[d].second = value_i;
        updated = true;
      }
    if (!updated) displaced[n_displaced++] = {j, value_i};
  }
  std::sort(out, out + top_k_);
}

bool ExpertRouter::routed(uint64_t sequence, uint64_t token, uint32_t moe_layer, uint32_t expert) const {
  uint32_t chosen[kMaxTopK];
  route(sequence, token, moe_layer, chosen);
  return std::binary_search(chosen, chosen + top_k_, expert);
}

}  // namespace wafersim::workloads
