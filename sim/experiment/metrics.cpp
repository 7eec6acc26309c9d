#include "sim/experiment/metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace wafersim {

namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank.
  const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

LatencySummary summarise(std::vector<double> values) {
  if (values.empty()) return {};
  double sum = 0;
  for (double value : values) sum += value;
  std::sort(values.begin(), values.end());
  return {sum / double(values.size()), percentile(values, 50), percentile(values, 99), values.back()};
}

std::array<double, size_t(Category::kCount)> fractions(const CriticalPath& path) {
  std::array<double, size_t(Category::kCount)> out{};
  uint64_t total = 0;
  for (uint64_t cycles : path) total += cycles;
  for (size_t c = 0; c < out.size(); ++c) out[c] = total ? double(path[c]) / double(total) : 0;
  return out;
}

std::vector<LayerCycles> per_region(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline) {
  std::vector<LayerCycles> out;
  const uint64_t iterations = plan.programs.iterations;
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    double sum = 0;
    for (uint64_t n = 0; n < iterations; ++n) sum += double(timeline.finish[r][n] - timeline.start[r][n]);
    out.push_back({plan.regions[r].name, iterations ? sum / double(iterations) : 0});
  }
  return out;
}

DecodeCounts count_decode(const mapping::Plan& plan, const IterationInputs& inputs) {
  DecodeCounts counts;
  counts.energy = count_energy(plan, inputs, plan.hw);
  if (plan.model.moe.n_experts > 0) counts.moe = workloads::decode_expert_load(plan.model, plan.workload);
  return counts;
}

DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline,
                             const IterationInputs& inputs) {
  return decode_metrics(plan, timeline, count_decode(plan, inputs));
}

DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline, DecodeCounts counts) {
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
    metrics.token_latencies_us = latencies_us;
    metrics.per_token_latency_us = summarise(std::move(latencies_us));
  }
  metrics.breakdown = fractions(timeline.critical_path);
  metrics.per_layer = per_region(plan, timeline);
  metrics.moe = std::move(counts.moe);
  metrics.energy = energy_metrics(counts.energy, timeline, metrics.total_cycles, metrics.tokens, plan.hw);
  return metrics;
}

PrefillMetrics prefill_metrics(const mapping::Plan& prefill_plan, const mapping::DecodeTimeline& prefill,
                               const IterationInputs& inputs, const HardwareSpec& system, const DecodeMetrics& decode,
                               const mapping::DecodeTimeline& decode_timeline) {
  PrefillMetrics metrics;
  const workloads::WorkloadSpec& workload = prefill_plan.workload;
  const HardwareSpec& hw = prefill_plan.hw;
  metrics.chunk_tokens = workload.prefill_chunk_size();
  metrics.chunks = prefill_plan.programs.iterations;
  metrics.padded_tokens = metrics.chunks * metrics.chunk_tokens - workload.prompt_tokens_total();
  metrics.sram_peak_bytes = prefill_plan.sram_peak_bytes;
  metrics.cycles = mapping::last_exit_cycle(prefill);
  metrics.seconds = hw.cycles_to_us(double(metrics.cycles)) / 1e6;
  if (metrics.seconds > 0) metrics.tokens_per_second = double(workload.prompt_tokens_total()) / metrics.seconds;
  metrics.breakdown = fractions(prefill.critical_path);
  metrics.per_layer = per_region(prefill_plan, prefill);
  metrics.steps = region_steps(prefill_plan, inputs);
  // Decode iteration s < batch is sequence s's first token.
  const std::vector<uint64_t>& head = decode_timeline.finish.back();
  std::vector<double> first_token_us;
  for (uint64_t s = 0; s < std::min<uint64_t>(workload.batch, head.size()); ++s)
    first_token_us.push_back(hw.cycles_to_us(double(metrics.cycles + head[s])));
  metrics.time_to_first_token_us = summarise(std::move(first_token_us));
  const double total_seconds = hw.cycles_to_us(double(metrics.cycles + decode.total_cycles)) / 1e6;
  if (total_seconds > 0) metrics.end_to_end_tokens_per_second = double(decode.tokens) / total_seconds;
  metrics.energy =
      energy_metrics(prefill_plan, inputs, prefill, metrics.cycles, workload.prompt_tokens_total(), system);
  return metrics;
}

}  // namespace wafersim
