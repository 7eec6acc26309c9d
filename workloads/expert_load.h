#pragma once
// How the seeded router spreads a decode batch over an MoE layer's experts:
// per MoE layer and decode step, each routed expert's load is the number of
// the batch's tokens (one per sequence) that chose it.
#include <cstdint>

#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

// Means over every MoE layer and decode step.
struct ExpertLoad {
  double max_tokens = 0;     // the busiest routed expert's load
  double mean_tokens = 0;    // the mean load of the routed experts that take at least one token
  double idle_fraction = 0;  // routed experts that take no token, over the routed experts
};

// Zero loads for a model without MoE layers.
ExpertLoad decode_expert_load(const ModelSpec& model, const WorkloadSpec& workload);

}  // namespace wafersim::workloads
