#include "workloads/serving/serving_spec.h"

#include <algorithm>
#include <cmath>

#include "models/config/param_table.h"
#include "models/config/text.h"
#include "workloads/model_spec.h"
#include "workloads/serving/request_stream.h"

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

using config::float_param;
using config::int_param;

constexpr double kMaxTokens = 1 << 26;

struct ClassDefaults {
  const char* requests;
  const char* priority;
  const char* prompt_tokens;
  const char* output_tokens;
};

config::ParamTable<LengthSpec> length_table(const std::string& prefix, const char* what, const char* tokens) {
  config::ParamTable<LengthSpec> t;
  t.add_enum<LengthDistribution>(prefix + ".distribution",
                                 {{"fixed", LengthDistribution::Fixed},
                                  {"uniform", LengthDistribution::Uniform},
                                  {"lognormal", LengthDistribution::Lognormal},
                                  {"histogram", LengthDistribution::Histogram}},
                                 "fixed", std::string("How ") + what + " lengths are drawn", &LengthSpec::distribution)
      .add(int_param(prefix + ".tokens", "tokens", tokens, 1, kMaxTokens,
                     std::string("fixed: the ") + what + " length; lognormal: its mean"),
           &LengthSpec::tokens)
      .add(int_param(prefix + ".min_tokens", "tokens", "1", 1, kMaxTokens,
                     "uniform: the shortest length; lognormal: lengths below are raised to it"),
           &LengthSpec::min_tokens)
      .add(int_param(prefix + ".max_tokens", "tokens", tokens, 1, kMaxTokens,
                     "uniform: the longest length; lognormal: lengths above are cut to it"),
           &LengthSpec::max_tokens)
      .add(float_param(prefix + ".sigma", "", "0.5", 0, 10, "lognormal: standard deviation of log(length)"),
           &LengthSpec::sigma)
      .add(config::as_type(config::ParamType::IntList, int_param(prefix + ".histogram_tokens", "tokens", "[]", 1,
                                                                 kMaxTokens, "histogram: the lengths (one per bin)")),
           &LengthSpec::histogram_tokens)
      .add(config::as_type(config::ParamType::IntList,
                           int_param(prefix + ".histogram_weights", "", "[]", 0, 1e12,
                                     "histogram: the relative weight of each bin, as many as histogram_tokens")),
           &LengthSpec::histogram_weights);
  return t;
}

config::ParamTable<ClassSpec> class_table(const std::string& name, const ClassDefaults& d) {
  const std::string p = "serving." + name;
  config::ParamTable<ClassSpec> t;
  // Every request is held for the whole run (about 270 bytes each, measured):
  // a million per class bounds a run near 600 MB and a few seconds.
  t.add(int_param(p + ".requests", "requests", d.requests, 0, 1e6,
                  "Synthetic requests (turns) of this class, at most a million; 0 = none (ignored with a trace file)"),
        &ClassSpec::requests)
      .add_enum<ArrivalProcess>(
          p + ".arrival", {{"poisson", ArrivalProcess::Poisson}, {"gamma", ArrivalProcess::Gamma}}, "poisson",
          "Arrival process of new requests (sessions): poisson, or gamma (bursty)", &ClassSpec::arrival)
      .add(float_param(p + ".rate_per_s", "requests/s", "1", 0, 1e9,
                       "Mean arrival rate of new requests (sessions); must be > 0"),
           &ClassSpec::rate_per_s)
      .add(float_param(p + ".burstiness", "", "4", 0.01, 1e4,
                       "gamma: squared coefficient of variation of the gaps between arrivals (1 = Poisson)"),
           &ClassSpec::burstiness)
      .add_table(length_table(p + ".prompt", "prompt (new tokens of a turn)", d.prompt_tokens), &ClassSpec::prompt)
      .add_table(length_table(p + ".output", "output", d.output_tokens), &ClassSpec::output)
      .add(int_param(p + ".turns", "turns", "1", 1, 1e6,
                     "Turns per session; a turn's prompt extends the previous turn's context"),
           &ClassSpec::turns)
      .add(float_param(p + ".think_time_s", "s", "5", 0, 1e6,
                       "From a turn's last token reaching the client to the session's next turn"),
           &ClassSpec::think_time_s)
      .add(int_param(p + ".priority", "", d.priority, -1000, 1000,
                     "Scheduling priority: higher first; a higher class may preempt a lower one"),
           &ClassSpec::priority)
      .add(float_param(p + ".rate_limit.requests_per_s", "requests/s", "0", 0, 1e9,
                       "Token-bucket refill of requests; 0 = no request limit"),
           &ClassSpec::limit_requests_per_s)
      .add(float_param(p + ".rate_limit.burst_requests", "requests", "1", 1, 1e9,
                       "Token-bucket size of the request limit"),
           &ClassSpec::limit_burst_requests)
      .add(float_param(p + ".rate_limit.tokens_per_min", "tokens/min", "0", 0, 1e15,
                       "Token-bucket refill of prompt + output tokens; 0 = no token limit"),
           &ClassSpec::limit_tokens_per_min)
      .add(float_param(p + ".rate_limit.burst_tokens", "tokens", "0", 0, 1e15,
                       "Token-bucket size of the token limit (0 = one minute's refill)"),
           &ClassSpec::limit_burst_tokens)
      .add(int_param(p + ".queue_limit", "requests", "0", 0, 1e9,
                     "Requests of this class that may wait; one more is rejected (0 = unbounded)"),
           &ClassSpec::queue_limit)
      .add(float_param(p + ".slo.ttft_ms", "ms", "0", 0, 1e9,
                       "Goodput: time to first token at most this (0 = no bound)"),
           &ClassSpec::slo_ttft_ms)
      .add(float_param(p + ".slo.tpot_ms", "ms", "0", 0, 1e9,
                       "Goodput: mean time per output token after the first at most this (0 = no bound)"),
           &ClassSpec::slo_tpot_ms);
  return t;
}

void read_trace_file(const config::Config& config, const std::string& path, ServingSpec& spec) {
  if (!config.get_string(path).empty()) spec.trace_file = config.file_path(path);
}

config::ParamTable<TransportSpec> transport_table() {
  config::ParamTable<TransportSpec> t;
  t.add_enum<TransportKind>(
       "serving.transport.kind", {{"http", TransportKind::Http}, {"websocket", TransportKind::Websocket}}, "http",
       "http: a connection per request; websocket: one persistent connection per client", &TransportSpec::kind)
      .add(float_param("serving.transport.rtt_ms", "ms", "20", 0, 1e6, "Network round trip client-server"),
           &TransportSpec::rtt_ms)
      .add(int_param("serving.transport.handshake_round_trips", "round trips", "2", 0, 100,
                     "Round trips to open a connection before the request goes (TCP 1 + TLS 1.3 1); websocket "
                     "pays them once per client, plus one for the upgrade"),
           &TransportSpec::handshake_round_trips)
      .add(float_param("serving.transport.http.request_overhead_ms", "ms", "10", 0, 1e6,
                       "Server work per HTTP request: headers, authentication, routing, response framing"),
           &TransportSpec::http_request_overhead_ms)
      .add(float_param("serving.transport.websocket.request_overhead_ms", "ms", "2", 0, 1e6,
                       "Server work per request on an open WebSocket (one small frame)"),
           &TransportSpec::websocket_request_overhead_ms)
      .add(float_param("serving.transport.http.token_overhead_us", "us", "50", 0, 1e9,
                       "Server work per streamed token over HTTP (one server-sent event)"),
           &TransportSpec::http_token_overhead_us)
      .add(float_param("serving.transport.websocket.token_overhead_us", "us", "35", 0, 1e9,
                       "Server work per streamed token over a WebSocket (one frame)"),
           &TransportSpec::websocket_token_overhead_us)
      .add(int_param("serving.transport.clients", "clients", "16", 1, 1e9,
                     "Single-turn requests come from this many clients in turn (a session is one client)"),
           &TransportSpec::clients);
  return t;
}

const config::ParamTable<ServingSpec>& serving_table() {
  static const config::ParamTable<ServingSpec> table = [] {
    const std::array<ClassDefaults, kRequestClasses> defaults = {
        {{"100", "1", "512", "256"}, {"0", "0", "2048", "1024"}}};
    config::ParamTable<ServingSpec> t;
    t.add(int_param("serving.seed", "", "1", 0, 9.0e15, "Seed of the synthetic request streams"), &ServingSpec::seed);
    for (size_t c = 0; c < kRequestClasses; ++c)
      t.add_table(class_table(class_names()[c], defaults[c]),
                  [c](ServingSpec& spec) -> ClassSpec& { return spec.classes[c]; });
    t.add_converted(config::string_param("serving.trace_file", "\"\"",
                                         "CSV or JSONL trace (arrival_s, prompt_tokens, output_tokens, class[, "
                                         "session]) replacing the synthetic streams; relative to the experiment "
                                         "file; empty = synthetic"),
                    read_trace_file)
        .add(float_param("serving.duration_s", "s", "0", 0, 1e9,
                         "Stop the clock here and count what is left as unfinished (0 = until every request is done)"),
             &ServingSpec::duration_s)
        .add(int_param("serving.scheduler.max_batch", "sequences", "16", 1, 1 << 16,
                       "Sequences sharing the layer pipeline at once (continuous batching bound)"),
             &ServingSpec::max_batch)
        .add_enum<SchedulerPolicy>("serving.scheduler.policy",
                                   {{"prefill_first", SchedulerPolicy::PrefillFirst},
                                    {"decode_first", SchedulerPolicy::DecodeFirst},
                                    {"chunked", SchedulerPolicy::Chunked}},
                                   "prefill_first",
                                   "Which enters the pipeline first when both wait: a prompt's chunks or decode "
                                   "tokens; chunked: one chunk, then a token of every decoding sequence",
                                   &ServingSpec::policy)
        .add(config::bool_param("serving.scheduler.preemption", true,
                                "A higher-priority request finding the batch full pauses the newest lower-priority "
                                "one"),
             &ServingSpec::preemption)
        .add_table(transport_table(), &ServingSpec::transport);
    return t;
  }();
  return table;
}

}  // namespace

void declare_serving_params(config::Schema& schema) { serving_table().declare(schema); }

namespace {

// The checks of one length distribution that a synthetic stream draws from.
void check_lengths(const config::Config& config, const std::string& prefix, const LengthSpec& spec,
                   uint64_t max_positions) {
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
}

}  // namespace

ServingSpec serving_from_config(const config::Config& config, const ModelSpec& model) {
  ServingSpec spec = serving_table().read(config);
  const bool traced = !spec.trace_file.empty();
  // A file that cannot be a trace is the key's fault: refused where the key is, before a line is read.
  if (traced) {
    const std::string problem = trace_file_problem(spec.trace_file);
    if (!problem.empty()) config.fail("serving.trace_file", spec.trace_file + ": " + problem);
  }
  for (size_t c = 0; c < kRequestClasses; ++c) {
    const std::string p = std::string("serving.") + class_names()[c];
    ClassSpec& s = spec.classes[c];
    if (s.limit_burst_tokens == 0) s.limit_burst_tokens = s.limit_tokens_per_min;
    if (traced || s.requests == 0) continue;  // no synthetic stream draws from this class
    if (!(s.rate_per_s > 0)) config.fail(p + ".rate_per_s", "the arrival rate must be above 0 requests/s");
    // Sessions arrive at the rate; their later turns follow a think time apart.
    const double sessions = std::ceil(double(s.requests) / double(s.turns));
    const double span_s = sessions / s.rate_per_s + double(s.turns - 1) * s.think_time_s;
    if (span_s > kMaxArrivalSeconds)
      config.fail_given({p + ".rate_per_s", p + ".requests", p + ".turns", p + ".think_time_s"},
                        std::to_string(s.requests) + " requests at " + config::format_number(s.rate_per_s) +
                            " requests/s arrive over about " + config::format_number(span_s) + " s, past the " +
                            config::format_number(kMaxArrivalSeconds) + " s (10 days) a serving run may span");
    check_lengths(config, p + ".prompt", s.prompt, model.max_positions);
    check_lengths(config, p + ".output", s.output, model.max_positions);
    const uint64_t deepest = uint64_t(s.turns) * (s.prompt.largest() + s.output.largest());
    if (deepest > model.max_positions)
      config.fail_given({p + ".turns", p + ".prompt.tokens", p + ".output.tokens"},
                        "a session of " + std::to_string(s.turns) + " turns may reach " + std::to_string(deepest) +
                            " tokens of context, beyond the model's max_positions (" +
                            std::to_string(model.max_positions) + ")");
  }
  if (!traced && spec.classes[0].requests == 0 && spec.classes[1].requests == 0)
    config.fail_given({"serving.realtime.requests", "serving.background.requests"},
                      "no requests: give a class requests > 0, or a trace_file");
  return spec;
}

}  // namespace wafersim::workloads
