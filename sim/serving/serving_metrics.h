#pragma once
// The figures of a serving run, per class and overall (docs/SERVING.md):
// request counts by outcome (offered = completed + rejected + unfinished),
// latency distributions seen by the client, throughput, goodput, occupancy.
#include <array>
#include <cstdint>

#include "sim/serving/serving_sim.h"
#include "workloads/serving/serving_spec.h"

namespace wafersim::serving {

struct Distribution {
  uint64_t count = 0;  // values summarised; 0: every figure is 0 and reported as null
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
// Nearest-rank percentiles, as the decode metrics use.
Distribution distribution(std::vector<double> values);

struct ClassMetrics {
  uint64_t offered = 0, completed = 0, unfinished = 0;
  uint64_t rejected_rate_limit = 0, rejected_queue_full = 0, rejected_context = 0;
  uint64_t rejected() const { return rejected_rate_limit + rejected_queue_full + rejected_context; }
  uint64_t output_tokens = 0;  // generated, finished requests or not
  Distribution ttft_ms, tpot_ms, e2e_ms, queue_ms;
  Distribution tokens_per_second_per_user;  // per completed request of 2+ tokens: (tokens - 1) / (last - first)
  double tokens_per_second = 0;             // output tokens over the run
  double goodput_rps = 0;                   // completed requests within their class's SLOs, per second of the run
  uint64_t preemptions = 0;
};

struct ServingMetrics {
  ClassMetrics overall;
  std::array<ClassMetrics, workloads::kRequestClasses> classes;
  double duration_s = 0;   // from 0 to the last token leaving the pipeline (or serving.duration_s)
  double utilization = 0;  // busy time of the busiest region root over the run
};

ServingMetrics serving_metrics(const workloads::ServingSpec& spec, const ServingRun& run);

}  // namespace wafersim::serving
