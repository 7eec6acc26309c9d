#include "sim/experiment/metrics.h"

#include <algorithm>
#include <cmath>

namespace wafersim {

namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank.
  const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline) {
  DecodeMetrics metrics;
  const size_t head = plan.regions.size() - 1;
  const uint64_t iterations = plan.programs.iterations, batch = plan.workload.batch;
  metrics.tokens = iterations;
  std::vector<double> latencies_us;
  double cycles_sum = 0;
  for (uint64_t n = 0; n < iterations; ++n) {
    const uint64_t exit = timeline.finish[head][n];
    const uint64_t previous = n < batch ? 0 : timeline.finish[head][n - batch];
    metrics.total_cycles = std::max(metrics.total_cycles, exit);
    cycles_sum += double(exit - previous);
    latencies_us.push_back(plan.hw.cycles_to_us(double(exit - previous)));
  }
  if (iterations > 0) {
    metrics.cycles_per_token = cycles_sum / double(iterations);
    const double seconds = plan.hw.cycles_to_us(double(metrics.total_cycles)) / 1e6;
    metrics.tokens_per_second = seconds > 0 ? double(iterations) / seconds : 0;
    metrics.tokens_per_second_per_user = metrics.tokens_per_second / double(batch);
    double sum = 0;
    for (double us : latencies_us) sum += us;
    std::sort(latencies_us.begin(), latencies_us.end());
    metrics.per_token_latency_us = {sum / double(iterations), percentile(latencies_us, 50),
                                    percentile(latencies_us, 99), latencies_us.back()};
  }
  uint64_t path_total = 0;
  for (uint64_t cycles : timeline.critical_path) path_total += cycles;
  for (size_t c = 0; c < metrics.breakdown.size(); ++c)
    metrics.breakdown[c] = path_total ? double(timeline.critical_path[c]) / double(path_total) : 0;
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    double sum = 0;
    for (uint64_t n = 0; n < iterations; ++n) sum += double(timeline.finish[r][n] - timeline.start[r][n]);
    metrics.per_layer.push_back({plan.regions[r].name, iterations ? sum / double(iterations) : 0});
  }
  return metrics;
}

}  // namespace wafersim
