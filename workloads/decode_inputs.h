#pragma once
// Per-iteration inputs of a decode run: iteration n is token n / batch of
// sequence n % batch, at position prompt + token (that sequence's prompt), attending to prompt + token + 1
// positions; its experts are ExpertRouter's choice for that sequence and position.
#include <cstdint>
#include <vector>

#include "models/tile_program.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

class DecodeInputs : public IterationInputs {
 public:
  DecodeInputs(const ModelSpec& model, const WorkloadSpec& workload);
  uint64_t context(uint64_t iteration) const override;
  bool expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t expert) const override;
  void routed_experts(uint64_t iteration, uint32_t moe_layer, uint32_t count,
                      std::vector<uint32_t>& out) const override;
  bool any_expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t first, uint32_t count) const override;

 private:
  // The router's choice for the iteration and layer, ascending (cached).
  const std::vector<uint32_t>& chosen(uint64_t iteration, uint32_t moe_layer) const;

  WorkloadSpec workload_;
  ExpertRouter router_;
  // The last routing asked for: tiles of one layer ask about the same iteration in turn.
  mutable uint64_t cached_iteration_ = UINT64_MAX;
  mutable uint32_t cached_layer_ = UINT32_MAX;
  mutable std::vector<uint32_t> cached_experts_;
};

}  // namespace wafersim::workloads
