#include "mapping/timeline.h"

#include <algorithm>
#include <cmath>

namespace wafersim::mapping {

DecodeTimeline analytic_timeline(const Plan& plan, const IterationInputs& inputs) {
  const size_t regions = plan.regions.size();
  const uint64_t iterations = plan.programs.iterations, batch = plan.workload.batch;
  DecodeTimeline timeline;
  timeline.start.assign(regions, std::vector<uint64_t>(iterations));
  timeline.finish.assign(regions, std::vector<uint64_t>(iterations));
  std::vector<Timed> root_free(regions);
  std::vector<Timed> exits(iterations);
  auto transit = [&](size_t region) {
    const Task& send = plan.region_sends[region];
    return std::make_pair(send_cycles(plan.hw, send), send.dwafer != 0 ? Category::OffWafer : Category::Fabric);
  };
  for (uint64_t n = 0; n < iterations; ++n) {
    Timed arrival;
    if (n >= batch) {
      const auto [cycles, category] = transit(regions - 1);
      arrival = exits[n - batch].after(cycles, category);
    }
    for (size_t r = 0; r < regions; ++r) {
      // The root takes the input when it arrives, or when it is done with the previous iteration.
      const Timed start = later(root_free[r], arrival);
      const Timed finish = plan.regions[r].finish(start, inputs, n);
      timeline.start[r][n] = start.cycle;
      timeline.finish[r][n] = finish.cycle;
      root_free[r] = finish;
      const auto [cycles, category] = transit(r);
      arrival = finish.after(cycles, category);
    }
    exits[n] = root_free[regions - 1];
  }
  // The critical path ends where the last token leaves the LM head.
  const Timed* last = nullptr;
  for (const Timed& exit : exits)
    if (!last || exit.cycle >= last->cycle) last = &exit;
  if (last) timeline.critical_path = last->path;
  return timeline;
}

namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank.
  const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

DecodeMetrics decode_metrics(const Plan& plan, const DecodeTimeline& timeline) {
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

const char* category_name(Category category) {
  switch (category) {
    case Category::Compute: return "compute";
    case Category::Fabric: return "fabric";
    case Category::Reduce: return "reduce";
    case Category::OffWafer: return "offwafer";
    case Category::Contention: return "contention";
    case Category::kCount: break;
  }
  return "?";
}

}  // namespace wafersim::mapping
