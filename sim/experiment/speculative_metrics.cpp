#include "sim/experiment/speculative_metrics.h"

#include <algorithm>
#include <cmath>

namespace wafersim {

std::vector<std::vector<uint32_t>> speculative_draws(const workloads::SpeculativeSpec& spec, uint32_t batch,
                                                     uint64_t decode_tokens) {
  std::vector<std::vector<uint32_t>> draws(batch);
  for (uint32_t sequence = 0; sequence < batch; ++sequence)
    for (uint64_t step = 0, emitted = 0; emitted < decode_tokens; ++step) {
      draws[sequence].push_back(spec.step_tokens(sequence, step));
      emitted += draws[sequence].back();
    }
  return draws;
}

DecodeMetrics speculative_decode_metrics(const workloads::SpeculativeSpec& spec, const mapping::Plan& target,
                                         const mapping::Plan& draft, const mapping::DecodeTimeline& draft_timeline,
                                         const mapping::Plan& verify, const mapping::DecodeTimeline& verify_timeline,
                                         uint32_t wafer_rows) {
  const uint32_t batch = target.workload.batch;
  const uint64_t decode_tokens = target.workload.decode_tokens;
  SpeculativeMetrics s;
  s.draft_model = spec.draft.name;
  s.draft_tokens = spec.draft_tokens;
  s.acceptance = spec.acceptance == workloads::AcceptanceKind::Fixed ? "fixed" : "sampled";
  s.acceptance_rate = spec.rate;
  s.verify = spec.verify == workloads::VerifyKind::Pipelined ? "pipelined" : "chunk";
  s.target_rows = target.hw.grid_height;
  s.draft_rows = wafer_rows - target.hw.grid_height;
  s.draft_tiles = draft.tiles_used;
  s.expected_tokens_per_step = spec.expected_tokens_per_step();
  s.draft_cycles_per_step = mapping::last_exit_cycle(draft_timeline);
  s.verify_cycles_per_step = mapping::last_exit_cycle(verify_timeline);
  s.cycles_per_step = s.draft_cycles_per_step + s.verify_cycles_per_step;
  s.draft_fraction = s.cycles_per_step ? double(s.draft_cycles_per_step) / double(s.cycles_per_step) : 0;

  const std::vector<std::vector<uint32_t>> draws = speculative_draws(spec, batch, decode_tokens);
  uint64_t drawn_tokens = 0, drawn_steps = 0;
  for (const std::vector<uint32_t>& steps : draws) {
    s.steps = std::max<uint64_t>(s.steps, steps.size());
    drawn_steps += steps.size();
    for (uint32_t tokens : steps) drawn_tokens += tokens;
  }
  // Fixed acceptance reports its expectation; sampled the mean of its draws.
  s.tokens_per_step = spec.acceptance == workloads::AcceptanceKind::Fixed
                          ? s.expected_tokens_per_step
                          : (drawn_steps ? double(drawn_tokens) / double(drawn_steps) : 0);
  const double step_seconds = target.hw.cycles_to_us(double(s.cycles_per_step)) / 1e6;
  s.effective_tokens_per_second_per_user = step_seconds > 0 ? s.tokens_per_step / step_seconds : 0;

  // The schedule: every step takes cycles_per_step; the tokens a step emits
  // share its time (iteration n is token n / batch of sequence n % batch).
  DecodeMetrics metrics;
  metrics.tokens = uint64_t(batch) * decode_tokens;
  metrics.total_cycles = s.steps * s.cycles_per_step;
  std::vector<double> latencies_us(metrics.tokens);
  double cycles_sum = 0;
  for (uint32_t sequence = 0; sequence < batch; ++sequence) {
    uint64_t token = 0;
    for (uint32_t drawn : draws[sequence]) {
      const uint64_t tokens = std::min<uint64_t>(drawn, decode_tokens - token);
      const double cycles = double(s.cycles_per_step) / double(tokens);
      for (uint64_t t = 0; t < tokens; ++t, ++token) {
        latencies_us[token * batch + sequence] = target.hw.cycles_to_us(cycles);
        cycles_sum += cycles;
      }
    }
  }
  if (metrics.tokens > 0) {
    metrics.cycles_per_token = cycles_sum / double(metrics.tokens);
    const double seconds = target.hw.cycles_to_us(double(metrics.total_cycles)) / 1e6;
    metrics.tokens_per_second = seconds > 0 ? double(metrics.tokens) / seconds : 0;
    metrics.tokens_per_second_per_user = metrics.tokens_per_second / double(batch);
    metrics.token_latencies_us = latencies_us;
    metrics.per_token_latency_us = summarise(std::move(latencies_us));
  }
  CriticalPath path = draft_timeline.critical_path;
  for (size_t c = 0; c < path.size(); ++c) path[c] += verify_timeline.critical_path[c];
  metrics.breakdown = fractions(path);
  metrics.per_layer = per_region(verify, verify_timeline);
  metrics.speculative = s;
  return metrics;
}

mapping::DecodeTimeline first_step_timeline(const SpeculativeMetrics& speculative,
                                            const mapping::DecodeTimeline& verify_timeline, uint32_t batch) {
  mapping::DecodeTimeline timeline;
  timeline.finish.push_back({});
  const std::vector<uint64_t>& exits = verify_timeline.finish.back();
  for (size_t n = exits.size() - std::min<size_t>(batch, exits.size()); n < exits.size(); ++n)
    timeline.finish.back().push_back(speculative.draft_cycles_per_step + exits[n]);
  timeline.start.push_back(std::vector<uint64_t>(timeline.finish.back().size(), 0));
  return timeline;
}

}  // namespace wafersim
