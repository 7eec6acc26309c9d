#pragma once
// The requests a serving run receives, as sessions of turns: drawn from the
// serving section's synthetic streams (seeded, the same on every platform), or
// read from a CSV or JSONL trace file. A single-turn request is a session of one turn.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/serving/serving_spec.h"

namespace wafersim::workloads {

struct Turn {
  double arrival_s = -1;       // when the client sends it; < 0: think time after the previous turn's last token
  uint64_t prompt_tokens = 0;  // new tokens: the turn's prompt extends the session's context so far
  uint64_t output_tokens = 0;
};

struct Session {
  RequestClass request_class = RequestClass::Realtime;
  uint64_t client = 0;  // the connection it uses (websocket: a handshake on its first request only)
  double think_time_s = 0;
  std::vector<Turn> turns;  // turns[0].arrival_s >= 0
};

struct RequestStream {
  std::vector<Session> sessions;  // by first arrival
  std::string origin;             // "synthetic (seed 1)" or the trace file's path
  uint64_t turns() const;
};

// The synthetic streams of every class with requests > 0, merged by arrival.
RequestStream synthetic_stream(const ServingSpec& spec);

// Reads a trace (".csv": a header line naming the columns, then one request a
// line; ".jsonl": one JSON object a line) with arrival_s, prompt_tokens,
// output_tokens, class and an optional session. Rows of one session are its
// turns in order. Throws config::ConfigError naming the file and line: a
// missing column, a malformed line, unsorted arrivals, an unknown class, a
// length of 0 or a context beyond `max_positions`.
RequestStream read_trace(const std::string& path, const TransportSpec& transport, uint64_t max_positions);

// Why `path` cannot be a trace file (its extension, not a regular file, not
// readable), or "" when read_trace may read it. The checks read_trace makes
// before it reads a line.
std::string trace_file_problem(const std::string& path);

// The request stream a serving section describes.
RequestStream request_stream(const ServingSpec& spec, uint64_t max_positions);

// Seeded draws the synthetic streams use: integer arithmetic for the state
// and the algorithms written out here (the standard library's distributions
// differ between implementations), so a seed gives the same stream wherever
// log, exp and cos round alike.
class StreamRandom {
 public:
  explicit StreamRandom(uint64_t seed);
  double uniform();  // (0, 1)
  double exponential(double mean);
  double normal();  // mean 0, deviation 1
  double gamma(double shape, double scale);
  uint64_t length(const LengthSpec& spec);

 private:
  uint64_t state_;
};

}  // namespace wafersim::workloads
