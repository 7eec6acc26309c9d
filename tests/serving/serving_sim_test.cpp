// The serving loop against the closed form of the plan, and the properties a
// serving model must have: conservation of requests under every policy,
// queueing that grows with load, priority, transport, prefix reuse, determinism.
#include <catch2/catch.hpp>

#include "mapping/timeline.h"
#include "tests/serving/serving_fixture.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const char* kNoTransport =
    "  transport: {rtt_ms: 0, handshake_round_trips: 0, http: {request_overhead_ms: 0, token_overhead_us: 0}}\n";

void check_conservation(const serving::ClassMetrics& m) {
  CHECK(m.offered > 0);
  CHECK(m.offered == m.completed + m.rejected() + m.unfinished);
}

// A stream that overloads the tiny wafer, with every limit in play.
std::string overload(const std::string& extra) {
  return tiny_serving(
      "  realtime: {requests: 150, rate_per_s: 4000, prompt: {tokens: 64}, output: {tokens: 16}, priority: 1,\n"
      "             rate_limit: {requests_per_s: 2000, burst_requests: 20}, queue_limit: 40}\n"
      "  background: {requests: 300, rate_per_s: 8000, arrival: gamma, prompt: {distribution: uniform, min_tokens: "
      "32, max_tokens: 256},\n"
      "               output: {distribution: uniform, min_tokens: 8, max_tokens: 64}, queue_limit: 60,\n"
      "               rate_limit: {tokens_per_min: 3000000, burst_tokens: 20000}}\n" +
      extra);
}

}  // namespace

TEST_CASE("one request alone is timed as the closed form times its prefill and decode", "[serving]") {
  const Served s = serve_text(tiny_serving("  realtime: {requests: 1, prompt: {tokens: 64}, output: {tokens: 8}}\n" +
                                           std::string(kNoTransport)));
  REQUIRE(s.run.requests.size() == 1);
  const serving::RequestRecord& r = s.run.requests[0];
  REQUIRE(r.outcome == serving::Outcome::Completed);
  // The closed form of the same plans (compiled for a 64-token prompt): its two chunks, then tokens fed back.
  REQUIRE(s.plan->workload.prompt_tokens == 64);
  const mapping::Plan prefill = mapping::compile_prefill_plan(*s.plan);
  REQUIRE(prefill.programs.iterations == 2);
  const mapping::DecodeTimeline p = mapping::analytic_timeline(prefill, workloads::PrefillInputs(prefill.workload));
  const mapping::DecodeTimeline d =
      mapping::analytic_timeline(*s.plan, workloads::DecodeInputs(s.plan->model, s.plan->workload));
  const double hz = s.plan->hw.clock_ghz * 1e9;
  const double prefill_end = double(p.finish.back().back());
  const double first = (prefill_end + double(d.finish.back()[0])) / hz;
  const double last = (prefill_end + double(d.finish.back()[7])) / hz;
  const double tolerance = s.costs->interpolation_error() + 1e-9;
  CHECK(r.first_token_s - r.server_arrival_s == Approx(first).epsilon(tolerance));
  CHECK(r.last_token_s - r.server_arrival_s == Approx(last).epsilon(tolerance));
  CHECK(r.prefilled_tokens == 64);
}

TEST_CASE("the step costs interpolate the closed form within the error they report", "[serving]") {
  const Served s = serve_text(tiny_serving("  realtime: {requests: 1}\n"));
  CHECK(s.costs->interpolation_error() < 0.01);
  for (uint64_t context : {1u, 100u, 777u, 2049u, 4096u}) {
    struct Fixed : IterationInputs {
      uint64_t c;
      uint64_t context(uint64_t) const override { return c; }
      bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }
    } inputs;
    inputs.c = context;
    for (size_t r = 0; r < s.plan->regions.size(); ++r) {
      const double exact = double(s.plan->regions[r].finish(mapping::Timed{}, inputs, 0).cycle);
      CHECK(s.costs->service_cycles(serving::ItemKind::Decode, r, double(context)) ==
            Approx(exact).epsilon(s.costs->interpolation_error() + 1e-9));
    }
  }
}

TEST_CASE("every request is completed, rejected or unfinished under every policy", "[serving]") {
  for (const char* policy : {"prefill_first", "decode_first", "chunked"})
    for (const char* preemption : {"true", "false"})
      for (const char* duration : {"0", "0.08"}) {
        INFO(policy << " preemption " << preemption << " duration " << duration);
        const Served s = serve_text(overload(std::string("  scheduler: {max_batch: 4, policy: ") + policy +
                                             ", preemption: " + preemption + "}\n  duration_s: " + duration + "\n"));
        check_conservation(s.metrics.overall);
        for (const serving::ClassMetrics& m : s.metrics.classes) check_conservation(m);
        CHECK(s.metrics.overall.offered == s.run.requests.size());
        CHECK(s.metrics.overall.rejected() > 0);
        if (std::string(duration) == "0") CHECK(s.metrics.overall.unfinished == 0);
        if (std::string(duration) != "0") CHECK(s.metrics.overall.unfinished > 0);  // the clock stops mid-stream
      }
}

TEST_CASE("queueing delay grows with the arrival rate", "[serving]") {
  double previous_queue = -1, previous_ttft = -1;
  for (const char* rate : {"200", "1000", "3000"}) {
    const Served s =
        serve_text(tiny_serving(std::string("  realtime: {requests: 300, rate_per_s: ") + rate +
                                ", prompt: {tokens: 96}, output: {tokens: 32}}\n  scheduler: {max_batch: 4}\n"));
    INFO("rate " << rate);
    CHECK(s.metrics.overall.completed == 300);
    CHECK(s.metrics.overall.queue_ms.mean > previous_queue);
    CHECK(s.metrics.overall.ttft_ms.p99 > previous_ttft);
    previous_queue = s.metrics.overall.queue_ms.mean;
    previous_ttft = s.metrics.overall.ttft_ms.p99;
  }
}

TEST_CASE("priority keeps the real-time class's p99 TTFT below the background's under overload", "[serving]") {
  const std::string both =
      "  realtime: {requests: 100, rate_per_s: 500, prompt: {tokens: 64}, output: {tokens: 16}, priority: 1}\n"
      "  background: {requests: 400, rate_per_s: 5000, prompt: {tokens: 256}, output: {tokens: 64}}\n"
      "  scheduler: {max_batch: 4}\n" +
      std::string(kNoTransport);
  const Served s = serve_text(tiny_serving(both));
  const serving::ClassMetrics& realtime = s.metrics.classes[0];
  const serving::ClassMetrics& background = s.metrics.classes[1];
  REQUIRE(realtime.completed == 100);
  REQUIRE(background.completed == 400);
  CHECK(realtime.ttft_ms.p99 < background.ttft_ms.p99);
  CHECK(realtime.ttft_ms.p99 * 10 < background.ttft_ms.p99);  // overload: background queues for long
  CHECK(s.run.counters.preemptions > 0);
  // The same stream without priority: real-time requests wait in the crowd.
  const Served flat = serve_text(tiny_serving(both), {"serving.realtime.priority=0"});
  CHECK(flat.metrics.classes[0].ttft_ms.p99 > realtime.ttft_ms.p99 * 5);
}

TEST_CASE("a persistent WebSocket gives a lower TTFT than HTTP for the same stream", "[serving]") {
  const std::string stream =
      "  realtime: {requests: 200, rate_per_s: 300, prompt: {tokens: 64}, output: {tokens: 32}}\n";
  const Served http = serve_text(tiny_serving(stream));
  const Served websocket = serve_text(tiny_serving(stream), {"serving.transport.kind=websocket"});
  CHECK(websocket.metrics.overall.ttft_ms.mean < http.metrics.overall.ttft_ms.mean);
  CHECK(websocket.metrics.overall.ttft_ms.p50 < http.metrics.overall.ttft_ms.p50);
  // HTTP pays its handshake round trips and request overhead on every request:
  // 2 x 20 ms + 10 ms out + 10 ms overhead + 10 ms back at least; an open
  // WebSocket neither the round trips nor 8 of the 10 ms.
  CHECK(http.metrics.overall.ttft_ms.p50 > 70);
  CHECK(http.metrics.overall.ttft_ms.p50 - websocket.metrics.overall.ttft_ms.p50 > 40 + 8 - 1);
}

TEST_CASE("a session's next turn prefills only its new tokens while its cache stays on the wafer", "[serving]") {
  const std::string sessions =
      "  realtime: {requests: 40, turns: 4, think_time_s: 0.001, rate_per_s: 200, prompt: {tokens: 64}, output: "
      "{tokens: 16}}\n";
  // One copy of each KV head: copies would spend the SRAM the sessions' caches stay in.
  const Served s = serve_text(tiny_serving(sessions), {"mapping.kv_head_copies=1"});
  REQUIRE(s.metrics.overall.completed == 40);
  CHECK(s.run.counters.reused_prefix_tokens > 0);
  for (const serving::RequestRecord& r : s.run.requests) {
    INFO("request " << r.id << " turn " << r.turn);
    CHECK(r.context_tokens == (r.turn + 1) * 80);
    if (r.turn == 0) CHECK(r.prefilled_tokens == 64);
  }
  CHECK(s.run.counters.evictions == 0);
  // A KV share too small for every session: caches are evicted, later turns prefill their whole context.
  const uint64_t capacity = s.plan->max_context_tokens;
  REQUIRE(capacity > 320);
  const std::string crowded =
      "  realtime: {requests: 400, turns: 4, think_time_s: 0.05, rate_per_s: 20000, prompt: {tokens: 64}, output: "
      "{tokens: 16}}\n  scheduler: {max_batch: 64}\n";
  const Served tight = serve_text(tiny_serving(crowded));
  check_conservation(tight.metrics.overall);
  REQUIRE(capacity < 100 * 320);  // 100 sessions of up to 320 positions do not fit at once
  CHECK(tight.run.counters.evictions > 0);
  bool whole_context_again = false;
  for (const serving::RequestRecord& r : tight.run.requests)
    whole_context_again |= r.turn > 0 && r.prefilled_tokens == r.context_tokens - r.output_tokens;
  CHECK(whole_context_again);
}

TEST_CASE("the same seed gives the same run; another seed another stream", "[serving]") {
  const std::string text = overload("  scheduler: {max_batch: 4}\n");
  const Served a = serve_text(text), b = serve_text(text);
  REQUIRE(a.run.requests.size() == b.run.requests.size());
  for (size_t i = 0; i < a.run.requests.size(); ++i) {
    CHECK(a.run.requests[i].first_token_s == b.run.requests[i].first_token_s);
    CHECK(a.run.requests[i].outcome == b.run.requests[i].outcome);
  }
  const Served c = serve_text(text, {"serving.seed=2"});
  CHECK(c.run.requests[0].sent_s != a.run.requests[0].sent_s);
}

TEST_CASE("a request over its class's token bucket is rejected and counted", "[serving]") {
  // 100 requests arrive in about 0.05 s; the bucket holds 5 and refills 10 a second.
  const Served s = serve_text(
      tiny_serving("  realtime: {requests: 100, rate_per_s: 2000, prompt: {tokens: 32}, output: {tokens: 4},\n"
                   "             rate_limit: {requests_per_s: 10, burst_requests: 5}}\n"));
  const serving::ClassMetrics& m = s.metrics.classes[0];
  const double span_s = s.run.requests.back().server_arrival_s - s.run.requests.front().server_arrival_s;
  CHECK(m.completed >= 5);
  CHECK(double(m.completed) <= 5 + 10 * span_s + 1);
  CHECK(m.rejected_rate_limit == 100 - m.completed);
}

TEST_CASE("random serving sections always end, every request accounted for", "[serving]") {
  uint64_t state = 12345;
  auto pick = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  const char* policies[] = {"prefill_first", "decode_first", "chunked"};
  const char* distributions[] = {"fixed", "uniform", "lognormal"};
  for (int round = 0; round < 24; ++round) {
    std::string text;
    for (const char* cls : {"realtime", "background"}) {
      text += std::string("  ") + cls + ": {requests: " + std::to_string(pick(60)) +
              ", rate_per_s: " + std::to_string(100 + pick(5000)) + ", arrival: " + (pick(2) ? "gamma" : "poisson") +
              ", turns: " + std::to_string(1 + pick(4)) + ", think_time_s: 0.00" + std::to_string(pick(9)) +
              ", priority: " + std::to_string(pick(3)) + ", queue_limit: " + std::to_string(pick(20)) +
              ", rate_limit: {requests_per_s: " + std::to_string(pick(3) * 500) +
              ", burst_requests: " + std::to_string(1 + pick(10)) +
              "},\n    prompt: {distribution: " + distributions[pick(3)] +
              ", tokens: " + std::to_string(16 + pick(400)) +
              ", min_tokens: 8, max_tokens: 600}, output: {tokens: " + std::to_string(1 + pick(64)) +
              ", max_tokens: 64}}\n";
    }
    text += std::string("  scheduler: {max_batch: ") + std::to_string(1 + pick(12)) + ", policy: " + policies[pick(3)] +
            ", preemption: " + (pick(2) ? "true" : "false") +
            "}\n  transport: {kind: " + (pick(2) ? "http" : "websocket") +
            "}\n  duration_s: " + (pick(3) ? "0" : "0.1") + "\n";
    INFO(text);
    const std::string yaml = tiny_serving(text);
    bool any = false;
    for (const char* cls : {"realtime", "background"})
      any |= yaml.find(std::string(cls) + ": {requests: 0,") == std::string::npos;
    if (!any) continue;  // a section without requests is refused, as tested elsewhere
    const Served s = serve_text(yaml);
    const serving::ClassMetrics& m = s.metrics.overall;
    CHECK(m.offered == s.run.requests.size());
    CHECK(m.offered == m.completed + m.rejected() + m.unfinished);
    if (s.spec.duration_s == 0) CHECK(m.unfinished == 0);
  }
}
