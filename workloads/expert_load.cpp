#include "workloads/expert_load.h"

#include <algorithm>
#include <vector>

namespace wafersim::workloads {

ExpertLoad decode_expert_load(const ModelSpec& model, const WorkloadSpec& workload) {
  ExpertLoad load;
  const uint32_t experts = model.moe.n_experts;
  if (experts == 0) return load;
  const ExpertRouter router(workload.seed, experts, model.moe.top_k);
  std::vector<uint32_t> chosen(model.moe.top_k), tokens(experts);
  uint64_t samples = 0;
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    if (!model.is_moe_layer(layer)) continue;
    for (uint64_t step = 0; step < workload.decode_tokens; ++step) {
      std::fill(tokens.begin(), tokens.end(), 0);
      for (uint64_t sequence = 0; sequence < workload.batch; ++sequence) {
        router.route(sequence, workload.decode_position(sequence, step), layer, chosen.data());
        for (uint32_t expert : chosen) ++tokens[expert];
      }
      const uint64_t busy = uint64_t(std::count_if(tokens.begin(), tokens.end(), [](uint32_t n) { return n > 0; }));
      load.max_tokens += *std::max_element(tokens.begin(), tokens.end());
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
