#include "workloads/workload_spec.h"

#include <string>

#include "models/config/config.h"
#include "workloads/model_spec.h"

namespace wafersim::workloads {

void declare_workload_params(config::Schema& schema) {
  using config::int_param;
  schema.add(int_param("workload.batch", "sequences", "1", 1, 1 << 20,
                       "Sequences decoded together (in flight in the layer pipeline)"));
  schema.add(int_param("workload.prompt_tokens", "tokens", "1024", 0, 1 << 26,
                       "Prompt length: the KV cache holds this many positions when decode starts"));
  schema.add(int_param("workload.decode_tokens", "tokens", "16", 1, 1 << 26, "Tokens generated per sequence"));
  schema.add(int_param("workload.seed", "", "1", 0, 9.0e15, "Seed of MoE routing and anything else random"));
}

WorkloadSpec workload_from_config(const config::Config& config) {
  WorkloadSpec workload;
  workload.batch = static_cast<uint32_t>(config.get_int("workload.batch"));
  workload.prompt_tokens = static_cast<uint64_t>(config.get_int("workload.prompt_tokens"));
  workload.decode_tokens = static_cast<uint64_t>(config.get_int("workload.decode_tokens"));
  workload.seed = static_cast<uint64_t>(config.get_int("workload.seed"));
  return workload;
}

void check_workload_against_model(const config::Config& config, const WorkloadSpec& workload, const ModelSpec& model) {
  if (workload.max_context() > model.max_positions)
    config.fail_given({"workload.prompt_tokens", "workload.decode_tokens", "model.max_positions"},
                      "prompt_tokens + decode_tokens = " + std::to_string(workload.max_context()) +
                          " exceeds the model's max_positions (" + std::to_string(model.max_positions) + ")");
}

}  // namespace wafersim::workloads
