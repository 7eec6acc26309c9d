#pragma once
// What is asked of the model: how many sequences, how long a prompt, how many tokens.
#include <cstdint>
#include <utility>
#include <vector>

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

namespace workloads {

struct ModelSpec;

struct WorkloadSpec {
  uint32_t batch = 1;             // sequences decoded together (in flight in the layer pipeline)
  uint64_t prompt_tokens = 1024;  // the longest prompt: KV cache filled to this length before decode starts
  // Per sequence, when prompts differ (size batch); empty: every prompt is prompt_tokens long.
  std::vector<uint64_t> prompt_lengths;
  uint64_t decode_tokens = 16;  // tokens generated per sequence
  uint64_t seed = 1;            // MoE routing and anything else random
  // Prefill: the prompt passes the layer regions in chunks before decode starts
  // (off: the KV cache is filled at cycle 0 and only decode is timed).
  bool prefill = true;
  uint64_t prefill_chunk_tokens = 128;  // at most this many prompt tokens per chunk

  uint64_t prompt(uint64_t sequence) const { return prompt_lengths.empty() ? prompt_tokens : prompt_lengths[sequence]; }
  // Where decode token `step` of `sequence` sits in it: after its prompt (the router's token, the new KV entry).
  uint64_t decode_position(uint64_t sequence, uint64_t step) const { return prompt(sequence) + step; }
  uint64_t prompt_tokens_total() const;  // over every sequence

  // Chunks the longest prompt is cut into, and their common size (its last
  // chunk is padded to it: fewer than prefill_chunks() tokens in all). Every
  // sequence's prompt is cut into chunks of that size.
  uint64_t prefill_chunks() const;
  uint64_t prefill_chunk_size() const;
  uint64_t prefill_chunks(uint64_t sequence) const;
  // The prefill's iterations in order: round k takes chunk k of every sequence
  // whose prompt has one, sequences in order. {sequence, chunk} per iteration.
  std::vector<std::pair<uint32_t, uint64_t>> prefill_order() const;

  uint64_t max_context() const { return prompt_tokens + decode_tokens; }
};

void declare_workload_params(config::Schema& schema);  // workload.*
WorkloadSpec workload_from_config(const config::Config& config);
// Throws ConfigError (at workload.decode_tokens) when the longest context exceeds
// the model's max_positions.
void check_workload_against_model(const config::Config& config, const WorkloadSpec& workload, const ModelSpec& model);

// Seeded top-k expert choice: the same (seed, sequence, token, layer) always
// routes to the same experts, independent of call order.
class ExpertRouter {
 public:
  ExpertRouter(uint64_t seed, uint32_t n_experts, uint32_t top_k);
  // Sorted list of `top_k` distinct experts, written to `out` (size top_k).
  // `token` is the token's position in its sequence; `moe_layer` is the
  // transformer layer index of the MoE layer.
  void route(uint64_t sequence, uint64_t token, uint32_t moe_layer, uint32_t* out) const;
  bool routed(uint64_t sequence, uint64_t token, uint32_t moe_layer, uint32_t expert) const;
  uint32_t n_experts() const { return n_experts_; }
  uint32_t top_k() const { return top_k_; }

 private:
  uint64_t seed_;
  uint32_t n_experts_, top_k_;
};

}  // namespace workloads
}  // namespace wafersim
