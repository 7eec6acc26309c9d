#pragma once
// Decode metrics computed from a timeline, whichever backend produced it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"

namespace wafersim {

struct LatencySummary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

struct LayerCycles {
  std::string name;
  double cycles_per_token = 0;  // mean over iterations of finish - start
};

struct DecodeMetrics {
  uint64_t tokens = 0;
  uint64_t total_cycles = 0;     // until the last token left the LM head
  double tokens_per_second = 0;  // all sequences
  double tokens_per_second_per_user = 0;
  LatencySummary per_token_latency_us;                       // from a sequence's previous token to this one
  double cycles_per_token = 0;                               // mean per-token latency in cycles
  std::array<double, size_t(Category::kCount)> breakdown{};  // fractions of the critical path
  std::vector<LayerCycles> per_layer;
};

DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline);

}  // namespace wafersim
