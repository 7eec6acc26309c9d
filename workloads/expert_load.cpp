#include "workloads/expert_load.h"

#include <algorithm>
#include <vector>

namespace wafersim::workloads {

ExpertLoad decode_expert_load(const ModelSpec& model, const WorkloadSpec& workload) {
  ExpertLoad load;
  const uint32_t experts = model.moe.n_experts;
  if (experts == 0) return load;
  const ExpertRouter router(workload.seed, experts, model.moe.top_k);
  std::vector<uint32_t> chosen(model.moe.top_k), tokens(experts), busy_experts;
  uint64_t samples = 0;
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    if (!model.is_moe_layer(layer)) continue;
    for (uint64_t step = 0; step < workload.decode_tokens; ++step) {
      // Only the experts the step routes are touched: a step costs its routing, not the expert count.
      busy_experts.clear();
      uint32_t most = 0;
      for (uint64_t sequence = 0; sequence < workload.batch; ++sequence) {
        router.route(sequence, workload.decode_position(sequence, step), layer, chosen.data());
        for (uint32_t expert : chosen) {
          if (tokens[expert]++ == 0) busy_experts.push_back(expert);
          most = std::max(most, tokens[expert]);
        }
      }
      for (uint32_t expert : busy_experts) tokens[expert] = 0;
      const uint64_t busy = busy_experts.size();
      load.max_tokens += most;
      load.mean_tokens += double(workload.batch) * model.moe.top_k / double(busy);
      load.idle_fraction += double(experts - busy) / experts;
      ++samples;
    }
  }
  if (samples == 0) return load;
  load.max_tokens /= double(samples);
  load.mean_tokens /= double(samples);
  load.idle_fraction /= double(samples);
  return load;
}

}  // namespace wafersim::workloads
