#include "sim/serving/serving_metrics.h"

#include <algorithm>
#include <cmath>

namespace wafersim::serving {

namespace {

double nearest_rank(const std::vector<double>& sorted, double p) {
  const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

struct Samples {
  std::vector<double> ttft_ms, tpot_ms, e2e_ms, queue_ms, per_user;
};

}  // namespace

Distribution distribution(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double value : values) sum += value;
  d.count = values.size();
  d.mean = sum / double(values.size());
  d.p50 = nearest_rank(values, 50);
  d.p90 = nearest_rank(values, 90);
  d.p99 = nearest_rank(values, 99);
  d.max = values.back();
  return d;
}

ServingMetrics serving_metrics(const workloads::ServingSpec& spec, const ServingRun& run) {
  ServingMetrics metrics;
  metrics.duration_s = run.counters.end_cycles / run.clock_hz;
  metrics.utilization = run.counters.end_cycles > 0 ? run.counters.busy_cycles / run.counters.end_cycles : 0;
  std::array<Samples, workloads::kRequestClasses + 1> samples;  // the last: overall
  std::array<ClassMetrics*, 2> targets{};
  for (const RequestRecord& record : run.requests) {
    const size_t c = size_t(record.request_class);
    targets = {&metrics.classes[c], &metrics.overall};
    const workloads::ClassSpec& cls = spec.classes[c];
    for (size_t t = 0; t < 2; ++t) {
      ClassMetrics& m = *targets[t];
      Samples& s = samples[t == 0 ? c : workloads::kRequestClasses];
      m.offered++;
      m.output_tokens += record.tokens_done;
      m.preemptions += record.preemptions;
      switch (record.outcome) {
        case Outcome::Completed: m.completed++; break;
        case Outcome::RejectedRateLimit: m.rejected_rate_limit++; break;
        case Outcome::RejectedQueueFull: m.rejected_queue_full++; break;
        case Outcome::RejectedContext: m.rejected_context++; break;
        case Outcome::Unfinished: m.unfinished++; break;
      }
      if (record.outcome != Outcome::Completed) continue;
      const double ttft_ms = (record.first_token_s - record.sent_s) * 1e3;
      const double e2e_ms = (record.last_token_s - record.sent_s) * 1e3;
      s.ttft_ms.push_back(ttft_ms);
      s.e2e_ms.push_back(e2e_ms);
      s.queue_ms.push_back((record.admitted_s - record.server_arrival_s) * 1e3);
      double tpot_ms = 0;
      if (record.output_tokens > 1) {
        tpot_ms = (record.last_token_s - record.first_token_s) * 1e3 / double(record.output_tokens - 1);
        s.tpot_ms.push_back(tpot_ms);
        if (tpot_ms > 0) s.per_user.push_back(1e3 / tpot_ms);
      }
      const bool ttft_ok = cls.slo_ttft_ms <= 0 || ttft_ms <= cls.slo_ttft_ms;
      const bool tpot_ok = cls.slo_tpot_ms <= 0 || tpot_ms <= cls.slo_tpot_ms;
      if (ttft_ok && tpot_ok) m.goodput_rps += 1;  // a count until divided below
    }
  }
  auto finish = [&](ClassMetrics& m, Samples& s) {
    m.ttft_ms = distribution(std::move(s.ttft_ms));
    m.tpot_ms = distribution(std::move(s.tpot_ms));
    m.e2e_ms = distribution(std::move(s.e2e_ms));
    m.queue_ms = distribution(std::move(s.queue_ms));
    m.tokens_per_second_per_user = distribution(std::move(s.per_user));
    m.tokens_per_second = metrics.duration_s > 0 ? double(m.output_tokens) / metrics.duration_s : 0;
    m.goodput_rps = metrics.duration_s > 0 ? m.goodput_rps / metrics.duration_s : 0;
  };
  for (size_t c = 0; c < workloads::kRequestClasses; ++c) finish(metrics.classes[c], samples[c]);
  finish(metrics.overall, samples[workloads::kRequestClasses]);
  return metrics;
}

}  // namespace wafersim::serving
