#pragma once
// Speculative decoding (workload.speculative): a small draft model proposes
// `draft_tokens` tokens one by one, then the target verifies all of them and
// one more position in a single pass; of the drafts, a prefix is accepted.
// Absent (no draft_model) the workload decodes plainly.
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/model_spec.h"

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

namespace workloads {

struct WorkloadSpec;

enum class AcceptanceKind { Fixed, Sampled };
// How the target's verify pass takes its k + 1 positions (mapping/verify_plan.h).
enum class VerifyKind { Pipelined, Chunk };

struct SpeculativeSpec {
  ModelSpec draft;            // the draft model, loaded and checked against the target
  std::string draft_source;   // what workload.speculative.draft_model named
  uint32_t draft_tokens = 4;  // k: draft tokens proposed per step
  AcceptanceKind acceptance = AcceptanceKind::Fixed;
  double rate = 0.7;  // probability that a draft token is accepted, given that those before it were
  uint64_t seed = 1;  // of the sampled draws
  VerifyKind verify = VerifyKind::Pipelined;

  // Tokens emitted per step in expectation, the closed form (1 - a^(k+1)) / (1 - a):
  // the accepted drafts plus the target's own token after them.
  double expected_tokens_per_step() const;
  // Tokens step `step` (from 0) of `sequence` emits, accepted drafts + 1. Fixed:
  // the running expectation rounded down, so the mean over steps tends to the
  // closed form; sampled: each draft accepted with probability `rate` until the
  // first rejection, a seeded draw keyed by (seed, sequence, step) alone.
  uint32_t step_tokens(uint64_t sequence, uint64_t step) const;
  // The verify pass reaches k positions past the decoded tokens: the KV cache must hold them.
  uint64_t extra_context() const { return draft_tokens; }
};

void declare_speculative_params(config::Schema& schema);  // workload.speculative.*
// None when no draft model is named. Throws ConfigError naming the key when the
// draft cannot be loaded, has another vocabulary than `target`, or the longest
// context plus the draft tokens exceeds either model's max_positions.
std::optional<SpeculativeSpec> speculative_from_config(const config::Config& config, const ModelSpec& target,
                                                       const WorkloadSpec& workload);

}  // namespace workloads
}  // namespace wafersim
