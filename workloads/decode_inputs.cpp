#include "workloads/decode_inputs.h"

#include <algorithm>

namespace wafersim::workloads {

DecodeInputs::DecodeInputs(const ModelSpec& model, const WorkloadSpec& workload)
    : workload_(workload), router_(workload.seed, model.moe.n_experts, model.moe.top_k) {}

uint64_t DecodeInputs::context(uint64_t iteration) const {
  return workload_.decode_position(iteration % workload_.batch, iteration / workload_.batch) + 1;
}

const std::vector<uint32_t>& DecodeInputs::chosen(uint64_t iteration, uint32_t moe_layer) const {
  if (iteration != cached_iteration_ || moe_layer != cached_layer_) {
    cached_experts_.resize(router_.top_k());
    // The router's token is the position in the sequence, as in build_decode_graph:
    // iteration n is decode token n / batch of sequence n % batch.
    const uint64_t sequence = iteration % workload_.batch;
    router_.route(sequence, workload_.decode_position(sequence, iteration / workload_.batch), moe_layer,
                  cached_experts_.data());
    cached_iteration_ = iteration;
    cached_layer_ = moe_layer;
  }
  return cached_experts_;
}

bool DecodeInputs::expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t expert) const {
  const std::vector<uint32_t>& experts = chosen(iteration, moe_layer);
  return std::binary_search(experts.begin(), experts.end(), expert);
}

void DecodeInputs::routed_experts(uint64_t iteration, uint32_t moe_layer, uint32_t count,
                                  std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t expert : chosen(iteration, moe_layer))
    if (expert < count) out.push_back(expert);
}

bool DecodeInputs::any_expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t first, uint32_t count) const {
  const std::vector<uint32_t>& experts = chosen(iteration, moe_layer);
  const auto at = std::lower_bound(experts.begin(), experts.end(), first);
  return at != experts.end() && *at - first < count;
}

}  // namespace wafersim::workloads
