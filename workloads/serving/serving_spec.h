#pragma once
// The serving.* section: who sends requests (two classes, each a synthetic
// stream or rows of a trace file), how the server admits and schedules them,
// and the transport between client and server (docs/SERVING.md).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/workload_spec.h"

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

namespace workloads {

struct ModelSpec;

// The two request classes; a trace names them in its class column.
enum class RequestClass : uint8_t { Realtime = 0, Background = 1 };
inline constexpr size_t kRequestClasses = 2;
const char* class_name(RequestClass request_class);
const std::array<const char*, kRequestClasses>& class_names();

enum class ArrivalProcess { Poisson, Gamma };
enum class LengthDistribution { Fixed, Uniform, Lognormal, Histogram };

struct LengthSpec {
  LengthDistribution distribution = LengthDistribution::Fixed;
  uint64_t tokens = 0;                      // fixed: the length; lognormal: the mean
  uint64_t min_tokens = 1, max_tokens = 1;  // uniform: the bounds; lognormal: the clamp
  double sigma = 0.5;                       // lognormal: of the underlying normal
  std::vector<uint64_t> histogram_tokens;   // histogram: the lengths ...
  std::vector<uint64_t> histogram_weights;  // ... and their relative weights
  uint64_t largest() const;                 // the longest length this can give
};

struct ClassSpec {
  uint64_t requests = 0;  // synthetic requests (turns) of this class; 0 = none
  ArrivalProcess arrival = ArrivalProcess::Poisson;
  double rate_per_s = 1;  // mean arrivals (sessions) per second
  double burstiness = 4;  // gamma: squared coefficient of variation of the gaps
  LengthSpec prompt, output;
  uint32_t turns = 1;               // turns per session (1 = single-turn requests)
  double think_time_s = 5;          // from a turn's last token to the session's next turn
  int64_t priority = 0;             // higher is scheduled first
  double limit_requests_per_s = 0;  // token bucket refill; 0 = no limit
  double limit_burst_requests = 1;  // bucket size
  double limit_tokens_per_min = 0;  // prompt + output tokens; 0 = no limit
  double limit_burst_tokens = 0;    // bucket size
  uint64_t queue_limit = 0;         // waiting requests; 0 = unbounded
  double slo_ttft_ms = 0;           // goodput: first token within this (0 = no bound)
  double slo_tpot_ms = 0;           // goodput: mean time per later token within this (0 = no bound)
};

enum class SchedulerPolicy { PrefillFirst, DecodeFirst, Chunked };
enum class TransportKind { Http, Websocket };

struct TransportSpec {
  TransportKind kind = TransportKind::Http;
  double rtt_ms = 20;                    // client-server network round trip
  uint32_t handshake_round_trips = 2;    // TCP + TLS 1.3 (websocket: + the upgrade, on a client's first request)
  double http_request_overhead_ms = 10;  // server work per HTTP request (parse, auth, route, frame)
  double websocket_request_overhead_ms = 2;
  double http_token_overhead_us = 50;  // per streamed token (server-sent event)
  double websocket_token_overhead_us = 35;
  uint64_t clients = 16;  // single-turn streams: request i comes from client i mod clients
};

// The serving clock counts cycles in a double: exact up to 2^53 cycles, which
// at the fastest clock a preset may set (10 GHz) is 900,719 s. A trace's
// arrivals, and a synthetic stream's mean span, stay within ten days.
constexpr double kMaxArrivalSeconds = 864000;

struct ServingSpec {
  uint64_t seed = 1;
  std::array<ClassSpec, kRequestClasses> classes;
  std::string trace_file;  // resolved path; "" = synthetic streams
  double duration_s = 0;   // stop the clock here (0 = run until every request is done)
  uint32_t max_batch = 16;
  SchedulerPolicy policy = SchedulerPolicy::PrefillFirst;
  bool preemption = true;
  TransportSpec transport;
};

void declare_serving_params(config::Schema& schema);  // serving.*

// The workload a serving plan is compiled for: batch 1, and the prompt rounded
// up to whole prefill chunks, so that the prefill plan's chunk is exactly
// workload.prefill_chunk_tokens.
WorkloadSpec serving_plan_workload(const WorkloadSpec& workload);
// Reads and checks serving.* (rates > 0, histogram shapes, lengths within the
// model's max_positions, a trace_file that can be read as one); errors are
// ConfigErrors at the value at fault. The trace's lines are read by request_stream.
ServingSpec serving_from_config(const config::Config& config, const ModelSpec& model);

}  // namespace workloads
}  // namespace wafersim
