#include "workloads/workload_spec.h"

#include <algorithm>
#include <string>

#include "models/config/param_table.h"
#include "workloads/model_spec.h"

namespace wafersim::workloads {

namespace {

constexpr const char* kBatch = "workload.batch";  // named again by the prompt lengths' check

// One number (or a list of one) is every sequence's prompt; a longer list has
// one per sequence of the batch, which is read before it.
void read_prompts(const config::Config& config, const std::string& path, WorkloadSpec& workload) {
  const std::vector<int64_t> prompts = config.get_int_or_list(path);
  const bool per_sequence = prompts.size() > 1;
  if (prompts.empty() || (per_sequence && prompts.size() != workload.batch))
    config.fail_given({path, kBatch}, path + " lists " + std::to_string(prompts.size()) +
                                          " prompt length(s) for a batch of " + std::to_string(workload.batch) +
                                          " sequence(s): give one per sequence, or a single number for all");
  workload.prompt_tokens = 0;
  for (int64_t length : prompts) {
    if (per_sequence) workload.prompt_lengths.push_back(uint64_t(length));
    workload.prompt_tokens = std::max(workload.prompt_tokens, uint64_t(length));
  }
}

using config::int_param;

const config::ParamTable<WorkloadSpec>& workload_table() {
  static const config::ParamTable<WorkloadSpec> table =
      config::ParamTable<WorkloadSpec>()
          .add(int_param(kBatch, "sequences", "1", 1, 1 << 20,
                         "Sequences decoded together (in flight in the layer pipeline)"),
               &WorkloadSpec::batch)
          .add_converted(
              config::as_type(config::ParamType::IntOrList,
                              int_param("workload.prompt_tokens", "tokens", "1024", 0, 1 << 26,
                                        "Prompt length: the KV cache holds this many positions when decode starts; a "
                                        "list gives one per sequence (as many as workload.batch)")),
              read_prompts)
          .add(int_param("workload.decode_tokens", "tokens", "16", 1, 1 << 26, "Tokens generated per sequence"),
               &WorkloadSpec::decode_tokens)
          .add(config::bool_param("workload.prefill", true,
                                  "Time the prompt's prefill (time to first token) before decode; false: the KV cache "
                                  "is filled at cycle 0"),
               &WorkloadSpec::prefill)
          .add(int_param("workload.prefill_chunk_tokens", "tokens", "128", 1, 65536,
                         "Most prompt tokens a prefill chunk carries through the layer pipeline"),
               &WorkloadSpec::prefill_chunk_tokens)
          .add(int_param("workload.seed", "", "1", 0, 9.0e15, "Seed of MoE routing and anything else random"),
               &WorkloadSpec::seed);
  return table;
}

}  // namespace

void declare_workload_params(config::Schema& schema) { workload_table().declare(schema); }

WorkloadSpec workload_from_config(const config::Config& config) { return workload_table().read(config); }

uint64_t WorkloadSpec::prompt_tokens_total() const {
  uint64_t total = 0;
  for (uint64_t s = 0; s < batch; ++s) total += prompt(s);
  return total;
}

uint64_t WorkloadSpec::prefill_chunks(uint64_t sequence) const {
  const uint64_t size = prefill_chunk_size();
  return size == 0 ? 0 : (prompt(sequence) + size - 1) / size;
}

std::vector<std::pair<uint32_t, uint64_t>> WorkloadSpec::prefill_order() const {
  std::vector<std::pair<uint32_t, uint64_t>> order;
  for (uint64_t chunk = 0; chunk < prefill_chunks(); ++chunk)
    for (uint32_t s = 0; s < batch; ++s)
      if (chunk < prefill_chunks(s)) order.emplace_back(s, chunk);
  return order;
}

uint64_t WorkloadSpec::prefill_chunks() const {
  return (prompt_tokens + prefill_chunk_tokens - 1) / prefill_chunk_tokens;
}

uint64_t WorkloadSpec::prefill_chunk_size() const {
  const uint64_t chunks = prefill_chunks();
  return chunks == 0 ? 0 : (prompt_tokens + chunks - 1) / chunks;
}

void check_workload_against_model(const config::Config& config, const WorkloadSpec& workload, const ModelSpec& model) {
  for (uint64_t s = 0; s < workload.batch; ++s)
    if (workload.prefill && workload.prompt(s) == 0)
      config.fail_given({"workload.prefill", "workload.prompt_tokens"},
                        "prefill: true needs a prompt (prompt_tokens >= 1" +
                            std::string(workload.prompt_lengths.empty() ? "" : " for every sequence") +
                            "); set prefill: false to time decode alone");
  if (workload.max_context() > model.max_positions)
    config.fail_given({"workload.prompt_tokens", "workload.decode_tokens", "model.max_positions"},
                      "prompt_tokens + decode_tokens = " + std::to_string(workload.max_context()) +
                          " exceeds the model's max_positions (" + std::to_string(model.max_positions) + ")");
}

}  // namespace wafersim::workloads
