#pragma once
// When each region root started and finished each iteration: what both the
// engine (through its Mark tasks) and the analytic model produce, and what
// every decode metric is computed from.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mapping/plan.h"

namespace wafersim::mapping {

struct DecodeTimeline {
  std::vector<std::vector<uint64_t>> start;   // [region][iteration]
  std::vector<std::vector<uint64_t>> finish;  // [region][iteration]
  // Cycles of the critical path ending at the last token, by Category.
  std::array<uint64_t, size_t(Category::kCount)> critical_path{};
};

// Contention-free closed form of the plan: each region root is a server that
// takes iterations in order; iteration n + batch enters once n has left the LM head.
DecodeTimeline analytic_timeline(const Plan& plan, const IterationInputs& inputs);

struct LatencySummary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

struct LayerCycles {
  std::string name;
  double cycles_per_token = 0;  // mean over iterations of finish - start
};

struct DecodeMetrics {
  uint64_t tokens = 0;
  uint64_t total_cycles = 0;               // until the last token left the LM head
  double tokens_per_second = 0;            // all sequences
  double tokens_per_second_per_user = 0;
  LatencySummary per_token_latency_us;     // from a sequence's previous token to this one
  double cycles_per_token = 0;             // mean per-token latency in cycles
  std::array<double, size_t(Category::kCount)> breakdown{};  // fractions of the critical path
  std::vector<LayerCycles> per_layer;
};

DecodeMetrics decode_metrics(const Plan& plan, const DecodeTimeline& timeline);

const char* category_name(Category category);  // "compute", "fabric", ...

}  // namespace wafersim::mapping
