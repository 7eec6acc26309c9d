#pragma once
// What speculative decoding reports (metrics.speculative.*), beside the decode metrics.
#include <cstdint>
#include <string>

namespace wafersim {

struct SpeculativeMetrics {
  std::string draft_model;
  uint32_t draft_tokens = 0;  // k
  std::string acceptance;     // "fixed" or "sampled"
  double acceptance_rate = 0;
  std::string verify;                               // "pipelined" or "chunk" (workload.speculative.verify)
  uint32_t target_rows = 0, draft_rows = 0;         // the bands of rows each model's plan holds
  uint64_t draft_tiles = 0;                         // tiles the draft's plan uses
  uint64_t steps = 0;                               // speculative steps of the batch until every sequence is done
  double tokens_per_step = 0;                       // mean tokens a step emits per sequence: accepted drafts + 1
  double expected_tokens_per_step = 0;              // the closed form (1 - a^(k+1)) / (1 - a)
  uint64_t draft_cycles_per_step = 0;               // the draft's k tokens of every sequence
  uint64_t verify_cycles_per_step = 0;              // the target's pass over k + 1 positions of every sequence
  uint64_t cycles_per_step = 0;                     // the two together
  double draft_fraction = 0;                        // draft cycles over step cycles
  double effective_tokens_per_second_per_user = 0;  // tokens_per_step over the step time
};

}  // namespace wafersim
