#include "workloads/serving/serving_spec.h"

#include <algorithm>
#include <filesystem>

#include "models/config/config.h"
#include "workloads/model_spec.h"

namespace wafersim::workloads {

const std::array<const char*, kRequestClasses>& class_names() {
  static const std::array<const char*, kRequestClasses> names = {"realtime", "background"};
  return names;
}

const char* class_name(RequestClass request_class) { return class_names()[size_t(request_class)]; }

uint64_t LengthSpec::largest() const {
  switch (distribution) {
    case LengthDistribution::Fixed: return tokens;
    case LengthDistribution::Uniform:
    case LengthDistribution::Lognormal: return max_tokens;
    case LengthDistribution::Histogram:
      return histogram_tokens.empty() ? 0 : *std::max_element(histogram_tokens.begin(), histogram_tokens.end());
  }
  return 0;
}

WorkloadSpec serving_plan_workload(const WorkloadSpec& workload) {
  WorkloadSpec out = workload;
  out.batch = 1;
  out.prompt_lengths.clear();  // one sequence: the longest prompt, prompt_tokens
  const uint64_t chunk = workload.prefill_chunk_tokens;
  out.prompt_tokens = std::max<uint64_t>(1, (workload.prompt_tokens + chunk - 1) / chunk) * chunk;
  out.prefill = true;
  return out;
}

namespace {

using config::enum_param;
using config::float_param;
using config::int_param;

constexpr double kMaxTokens = 1 << 26;

struct ClassDefaults {
  const char* requests;
  const char* priority;
  const char* prompt_tokens;
  const char* output_tokens;
};

void declare_lengths(config::Schema& schema, const std::string& prefix, const char* what, const char* tokens) {
  schema.add(enum_param(prefix + ".distribution", {"fixed", "uniform", "lognormal", "histogram"}, "fixed",
                        std::string("How ") + what + " lengths are drawn"));
  schema.add(int_param(prefix + ".tokens", "tokens", tokens, 1, kMaxTokens,
                       std::string("fixed: the ") + what + " length; lognormal: its mean"));
  schema.add(int_param(prefix + ".min_tokens", "tokens", "1", 1, kMaxTokens,
                       "uniform: the shortest length; lognormal: lengths below are raised to it"));
  schema.add(int_param(prefix + ".max_tokens", "tokens", tokens, 1, kMaxTokens,
                       "uniform: the longest length; lognormal: lengths above are cut to it"));
  schema.add(float_param(prefix + ".sigma", "", "0.5", 0, 10, "lognormal: standard deviation of log(length)"));
  config::ParamSpec lengths =
      int_param(prefix + ".histogram_tokens", "tokens", "[]", 1, kMaxTokens, "histogram: the lengths (one per bin)");
  lengths.type = config::ParamType::IntList;
  schema.add(lengths);
  config::ParamSpec weights = int_param(prefix + ".histogram_weights", "", "[]", 0, 1e12,
                                        "histogram: the relative weight of each bin, as many as histogram_tokens");
  weights.type = config::ParamType::IntList;
  schema.add(weights);
}

void declare_class(config::Schema& schema, const std::string& name, const ClassDefaults& d) {
  const std::string p = "serving." + name;
  schema.add(int_param(p + ".requests", "requests", d.requests, 0, 1e8,
                       "Synthetic requests (turns) of this class; 0 = none (ignored with a trace file)"));
  schema.add(enum_param(p + ".arrival", {"poisson", "gamma"}, "poisson",
                        "Arrival process of new requests (sessions): poisson, or gamma (bursty)"));
  schema.add(float_param(p + ".rate_per_s", "requests/s", "1", 0, 1e9,
                         "Mean arrival rate of new requests (sessions); must be > 0"));
  schema.add(float_param(p + ".burstiness", "", "4", 0.01, 1e4,
                         "gamma: squared coefficient of variation of the gaps between arrivals (1 = Poisson)"));
  declare_lengths(schema, p + ".prompt", "prompt (new tokens of a turn)", d.prompt_tokens);
  declare_lengths(schema, p + ".output", "output", d.output_tokens);
  schema.add(int_param(p + ".turns", "turns", "1", 1, 1e6,
                       "Turns per session; a turn's prompt extends the previous turn's context"));
  schema.add(float_param(p + ".think_time_s", "s", "5", 0, 1e6,
                         "From a turn's last token reaching the client to the session's next turn"));
  schema.add(int_param(p + ".priority", "", d.priority, -1000, 1000,
                       "Scheduling priority: higher first; a higher class may preempt a lower one"));
  schema.add(float_param(p + ".rate_limit.requests_per_s", "requests/s", "0", 0, 1e9,
                         "Token-bucket refill of requests; 0 = no request limit"));
  schema.add(
      float_param(p + ".rate_limit.burst_requests", "requests", "1", 1, 1e9, "Token-bucket size of the request limit"));
  schema.add(float_param(p + ".rate_limit.tokens_per_min", "tokens/min", "0", 0, 1e15,
                         "Token-bucket refill of prompt + output tokens; 0 = no token limit"));
  schema.add(float_param(p + ".rate_limit.burst_tokens", "tokens", "0", 0, 1e15,
                         "Token-bucket size of the token limit (0 = one minute's refill)"));
  schema.add(int_param(p + ".queue_limit", "requests", "0", 0, 1e9,
                       "Requests of this class that may wait; one more is rejected (0 = unbounded)"));
  schema.add(
      float_param(p + ".slo.ttft_ms", "ms", "0", 0, 1e9, "Goodput: time to first token at most this (0 = no bound)"));
  schema.add(float_param(p + ".slo.tpot_ms", "ms", "0", 0, 1e9,
                         "Goodput: mean time per output token after the first at most this (0 = no bound)"));
}

}  // namespace

void declare_serving_params(config::Schema& schema) {
  schema.add(int_param("serving.seed", "", "1", 0, 9.0e15, "Seed of the synthetic request streams"));
  declare_class(schema, "realtime", {"100", "1", "512", "256"});
  declare_class(schema, "background", {"0", "0", "2048", "1024"});
  schema.add(config::string_param(
      "serving.trace_file", "\"\"",
      "CSV or JSONL trace (arrival_s, prompt_tokens, output_tokens, class[, session]) replacing the synthetic "
      "streams; relative to the experiment file; empty = synthetic"));
  schema.add(float_param("serving.duration_s", "s", "0", 0, 1e9,
                         "Stop the clock here and count what is left as unfinished (0 = until every request is done)"));
  schema.add(int_param("serving.scheduler.max_batch", "sequences", "16", 1, 1 << 16,
                       "Sequences sharing the layer pipeline at once (continuous batching bound)"));
  schema.add(enum_param("serving.scheduler.policy", {"prefill_first", "decode_first", "chunked"}, "prefill_first",
                        "Which enters the pipeline first when both wait: a prompt's chunks or decode tokens; "
                        "chunked: one chunk, then a token of every decoding sequence"));
  schema.add(
      config::bool_param("serving.scheduler.preemption", true,
                         "A higher-priority request finding the batch full pauses the newest lower-priority one"));
  schema.add(enum_param("serving.transport.kind", {"http", "websocket"}, "http",
                        "http: a connection per request; websocket: one persistent connection per client"));
  schema.add(float_param("serving.transport.rtt_ms", "ms", "20", 0, 1e6, "Network round trip client-server"));
  schema.add(int_param("serving.transport.handshake_round_trips", "round trips", "2", 0, 100,
                       "Round trips to open a connection before the request goes (TCP 1 + TLS 1.3 1); websocket "
                       "pays them once per client, plus one for the upgrade"));
  schema.add(float_param("serving.transport.http.request_overhead_ms", "ms", "10", 0, 1e6,
                         "Server work per HTTP request: headers, authentication, routing, response framing"));
  schema.add(float_param("serving.transport.websocket.request_overhead_ms", "ms", "2", 0, 1e6,
                         "Server work per request on an open WebSocket (one small frame)"));
  schema.add(float_param("serving.transport.http.token_overhead_us", "us", "50", 0, 1e9,
                         "Server work per streamed token over HTTP (one server-sent event)"));
  schema.add(float_param("serving.transport.websocket.token_overhead_us", "us", "35", 0, 1e9,
                         "Server work per streamed token over a WebSocket (one frame)"));
  schema.add(int_param("serving.transport.clients", "clients", "16", 1, 1e9,
                       "Single-turn requests come from this many clients in turn (a session is one client)"));
}

namespace {

LengthSpec lengths_from_config(const config::Config& config, const std::string& prefix, uint64_t max_positions,
                               bool used) {
  LengthSpec spec;
  const std::string distribution = config.get_string(prefix + ".distribution");
  spec.distribution = distribution == "fixed"       ? LengthDistribution::Fixed
                      : distribution == "uniform"   ? LengthDistribution::Uniform
                      : distribution == "lognormal" ? LengthDistribution::Lognormal
                                                    : LengthDistribution::Histogram;
  spec.tokens = uint64_t(config.get_int(prefix + ".tokens"));
  spec.min_tokens = uint64_t(config.get_int(prefix + ".min_tokens"));
  spec.max_tokens = uint64_t(config.get_int(prefix + ".max_tokens"));
  spec.sigma = config.get_float(prefix + ".sigma");
  for (int64_t v : config.get_int_list(prefix + ".histogram_tokens")) spec.histogram_tokens.push_back(uint64_t(v));
  for (int64_t v : config.get_int_list(prefix + ".histogram_weights")) spec.histogram_weights.push_back(uint64_t(v));
  if (!used) return spec;
  if (spec.distribution == LengthDistribution::Uniform || spec.distribution == LengthDistribution::Lognormal)
    if (spec.min_tokens > spec.max_tokens)
      config.fail_given({prefix + ".min_tokens", prefix + ".max_tokens"},
                        "min_tokens (" + std::to_string(spec.min_tokens) + ") exceeds max_tokens (" +
                            std::to_string(spec.max_tokens) + ")");
  if (spec.distribution == LengthDistribution::Histogram) {
    if (spec.histogram_tokens.empty()) config.fail(prefix + ".histogram_tokens", "a histogram needs at least one bin");
    if (spec.histogram_weights.size() != spec.histogram_tokens.size())
      config.fail_given({prefix + ".histogram_weights", prefix + ".histogram_tokens"},
                        "histogram_weights has " + std::to_string(spec.histogram_weights.size()) +
                            " values and histogram_tokens " + std::to_string(spec.histogram_tokens.size()) +
                            "; give one weight per bin");
    uint64_t total = 0;
    for (uint64_t w : spec.histogram_weights) total += w;
    if (total == 0) config.fail(prefix + ".histogram_weights", "the weights add up to 0; give some bin a weight");
  }
  if (spec.largest() > max_positions) {
    const std::string key = spec.distribution == LengthDistribution::Fixed       ? ".tokens"
                            : spec.distribution == LengthDistribution::Histogram ? ".histogram_tokens"
                                                                                 : ".max_tokens";
    config.fail(prefix + key, "a length of " + std::to_string(spec.largest()) +
                                  " tokens exceeds the model's max_positions (" + std::to_string(max_positions) + ")");
  }
  return spec;
}

}  // namespace

ServingSpec serving_from_config(const config::Config& config, const ModelSpec& model) {
  ServingSpec spec;
  spec.seed = uint64_t(config.get_int("serving.seed"));
  const std::string trace = config.get_string("serving.trace_file");
  if (!trace.empty()) {
    std::filesystem::path path(trace);
    const config::SourceLocation& where = config.where("serving.trace_file");
    // A file named in an experiment file is relative to that file; from --set, to the working directory.
    if (path.is_relative() && where.line > 0 && where.file != "<stdin>")
      path = std::filesystem::path(where.file).parent_path() / path;
    spec.trace_file = path.string();
  }
  for (size_t c = 0; c < kRequestClasses; ++c) {
    const std::string p = std::string("serving.") + class_names()[c];
    ClassSpec& s = spec.classes[c];
    s.requests = uint64_t(config.get_int(p + ".requests"));
    const bool synthetic = trace.empty() && s.requests > 0;
    s.arrival = config.get_string(p + ".arrival") == "gamma" ? ArrivalProcess::Gamma : ArrivalProcess::Poisson;
    s.rate_per_s = config.get_float(p + ".rate_per_s");
    if (synthetic && !(s.rate_per_s > 0)) config.fail(p + ".rate_per_s", "the arrival rate must be above 0 requests/s");
    s.burstiness = config.get_float(p + ".burstiness");
    s.prompt = lengths_from_config(config, p + ".prompt", model.max_positions, synthetic);
    s.output = lengths_from_config(config, p + ".output", model.max_positions, synthetic);
    s.turns = uint32_t(config.get_int(p + ".turns"));
    s.think_time_s = config.get_float(p + ".think_time_s");
    if (synthetic && uint64_t(s.turns) * (s.prompt.largest() + s.output.largest()) > model.max_positions)
      config.fail_given({p + ".turns", p + ".prompt.tokens", p + ".output.tokens"},
                        "a session of " + std::to_string(s.turns) + " turns may reach " +
                            std::to_string(uint64_t(s.turns) * (s.prompt.largest() + s.output.largest())) +
                            " tokens of context, beyond the model's max_positions (" +
                            std::to_string(model.max_positions) + ")");
    s.priority = config.get_int(p + ".priority");
    s.limit_requests_per_s = config.get_float(p + ".rate_limit.requests_per_s");
    s.limit_burst_requests = config.get_float(p + ".rate_limit.burst_requests");
    s.limit_tokens_per_min = config.get_float(p + ".rate_limit.tokens_per_min");
    s.limit_burst_tokens = config.get_float(p + ".rate_limit.burst_tokens");
    if (s.limit_burst_tokens == 0) s.limit_burst_tokens = s.limit_tokens_per_min;
    s.queue_limit = uint64_t(config.get_int(p + ".queue_limit"));
    s.slo_ttft_ms = config.get_float(p + ".slo.ttft_ms");
    s.slo_tpot_ms = config.get_float(p + ".slo.tpot_ms");
  }
  if (trace.empty() && spec.classes[0].requests == 0 && spec.classes[1].requests == 0)
    config.fail_given({"serving.realtime.requests", "serving.background.requests"},
                      "no requests: give a class requests > 0, or a trace_file");
  spec.duration_s = config.get_float("serving.duration_s");
  spec.max_batch = uint32_t(config.get_int("serving.scheduler.max_batch"));
  const std::string policy = config.get_string("serving.scheduler.policy");
  spec.policy = policy == "prefill_first"  ? SchedulerPolicy::PrefillFirst
                : policy == "decode_first" ? SchedulerPolicy::DecodeFirst
                                           : SchedulerPolicy::Chunked;
  spec.preemption = config.get_bool("serving.scheduler.preemption");
  TransportSpec& t = spec.transport;
  t.kind = config.get_string("serving.transport.kind") == "websocket" ? TransportKind::Websocket : TransportKind::Http;
  t.rtt_ms = config.get_float("serving.transport.rtt_ms");
  t.handshake_round_trips = uint32_t(config.get_int("serving.transport.handshake_round_trips"));
  t.http_request_overhead_ms = config.get_float("serving.transport.http.request_overhead_ms");
  t.websocket_request_overhead_ms = config.get_float("serving.transport.websocket.request_overhead_ms");
  t.http_token_overhead_us = config.get_float("serving.transport.http.token_overhead_us");
  t.websocket_token_overhead_us = config.get_float("serving.transport.websocket.token_overhead_us");
  t.clients = uint64_t(config.get_int("serving.transport.clients"));
  return spec;
}

}  // namespace wafersim::workloads
