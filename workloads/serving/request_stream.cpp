#include "workloads/serving/request_stream.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "models/config/error.h"
#include "models/config/text.h"
#include "workloads/splitmix.h"

namespace wafersim::workloads {

uint64_t RequestStream::turns() const {
  uint64_t n = 0;
  for (const Session& session : sessions) n += session.turns.size();
  return n;
}

// ---- seeded draws ----------------------------------------------------------

StreamRandom::StreamRandom(uint64_t seed) : state_(seed) {}

double StreamRandom::uniform() { return (double(splitmix64_next(state_) >> 11) + 0.5) * 0x1.0p-53; }

double StreamRandom::exponential(double mean) { return -std::log(uniform()) * mean; }

double StreamRandom::normal() {
  // Box-Muller; one of the pair is enough.
  const double u = uniform(), v = uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

double StreamRandom::gamma(double shape, double scale) {
  // Marsaglia-Tsang; a shape below 1 is boosted by U^(1/shape).
  if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform(), 1.0 / shape);
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

uint64_t StreamRandom::length(const LengthSpec& spec) {
  switch (spec.distribution) {
    case LengthDistribution::Fixed: return spec.tokens;
    case LengthDistribution::Uniform:
      return spec.min_tokens + uint64_t(uniform() * double(spec.max_tokens - spec.min_tokens + 1));
    case LengthDistribution::Lognormal: {
      const double mu = std::log(double(spec.tokens)) - spec.sigma * spec.sigma / 2;  // the mean is `tokens`
      const double drawn = std::round(std::exp(mu + spec.sigma * normal()));
      return std::clamp(uint64_t(std::max(drawn, 1.0)), spec.min_tokens, spec.max_tokens);
    }
    case LengthDistribution::Histogram: {
      uint64_t total = 0;
      for (uint64_t w : spec.histogram_weights) total += w;
      double pick = uniform() * double(total);
      for (size_t i = 0; i < spec.histogram_tokens.size(); ++i) {
        pick -= double(spec.histogram_weights[i]);
        if (pick < 0) return spec.histogram_tokens[i];
      }
      return spec.histogram_tokens.back();
    }
  }
  return spec.tokens;
}

// ---- synthetic streams -----------------------------------------------------

RequestStream synthetic_stream(const ServingSpec& spec) {
  RequestStream stream;
  stream.origin = "synthetic (seed " + std::to_string(spec.seed) + ")";
  for (size_t c = 0; c < kRequestClasses; ++c) {
    const ClassSpec& cls = spec.classes[c];
    // A stream per class: adding one class leaves the other's requests as they were.
    StreamRandom random(spec.seed * 0x100000001b3ull + c);
    double clock = 0;
    uint64_t left = cls.requests;
    while (left > 0) {
      const double mean_gap = 1.0 / cls.rate_per_s;
      clock += cls.arrival == ArrivalProcess::Poisson ? random.exponential(mean_gap)
                                                      : random.gamma(1.0 / cls.burstiness, mean_gap * cls.burstiness);
      Session session;
      session.request_class = RequestClass(c);
      session.think_time_s = cls.think_time_s;
      const uint64_t turns = std::min<uint64_t>(cls.turns, left);
      for (uint64_t t = 0; t < turns; ++t) {
        Turn turn;
        turn.arrival_s = t == 0 ? clock : -1;
        turn.prompt_tokens = random.length(cls.prompt);
        turn.output_tokens = random.length(cls.output);
        session.turns.push_back(turn);
      }
      left -= turns;
      stream.sessions.push_back(std::move(session));
    }
  }
  std::stable_sort(stream.sessions.begin(), stream.sessions.end(),
                   [](const Session& a, const Session& b) { return a.turns[0].arrival_s < b.turns[0].arrival_s; });
  uint64_t single = 0;
  for (size_t i = 0; i < stream.sessions.size(); ++i) {
    Session& session = stream.sessions[i];
    // A session keeps one connection; single-turn requests share the clients in turn.
    session.client = session.turns.size() > 1 ? spec.transport.clients + i : single++ % spec.transport.clients;
  }
  return stream;
}

// ---- trace files -----------------------------------------------------------

namespace {

struct TraceRow {
  double arrival_s = 0;
  uint64_t prompt_tokens = 0, output_tokens = 0;
  RequestClass request_class = RequestClass::Realtime;
  std::optional<std::string> session;
  int line = 0;
};

class TraceReader {
 public:
  TraceReader(std::string path, uint64_t max_positions) : path_(std::move(path)), max_positions_(max_positions) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw config::ConfigError({path_, line, 0}, "serving.trace_file", message);
  }

  double number(int line, const std::string& column, const std::string& text) const {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(value))
      fail(line, "column " + column + " expects a number, got " + config::quoted(text));
    return value;
  }

  uint64_t tokens(int line, const std::string& column, const std::string& text) const {
    const double value = number(line, column, text);
    if (value < 1 || value != std::floor(value) || value > 9.0e15)
      fail(line, "column " + column + " expects a whole number of tokens >= 1, got " + config::quoted(text));
    if (uint64_t(value) > max_positions_)
      fail(line, column + " = " + text + " tokens exceeds the model's max_positions (" +
                     std::to_string(max_positions_) + ")");
    return uint64_t(value);
  }

  RequestClass request_class(int line, const std::string& text) const {
    for (size_t c = 0; c < kRequestClasses; ++c)
      if (text == class_names()[c]) return RequestClass(c);
    std::vector<std::string> names(class_names().begin(), class_names().end());
    fail(line, "unknown class " + config::quoted(text) + " (classes: " + config::join(names) + ")" +
                   config::did_you_mean(text, names));
  }

  void add(TraceRow row) {
    if (row.arrival_s < 0) fail(row.line, "arrival_s must be >= 0 s");
    if (row.arrival_s > kMaxArrivalSeconds)
      fail(row.line, "arrival_s = " + config::format_number(row.arrival_s) + " s is past the " +
                         config::format_number(kMaxArrivalSeconds) +
                         " s (10 days) a trace may span: later times lose the cycle in the serving clock");
    if (!rows_.empty() && row.arrival_s < rows_.back().arrival_s)
      fail(row.line, "arrivals are not sorted: " + config::format_number(row.arrival_s) + " s comes after " +
                         config::format_number(rows_.back().arrival_s) + " s (line " +
                         std::to_string(rows_.back().line) + ")");
    rows_.push_back(std::move(row));
  }

  RequestStream stream(const TransportSpec& transport) {
    RequestStream stream;
    stream.origin = path_;
    std::map<std::string, size_t> by_session;
    std::map<std::string, uint64_t> context;
    uint64_t single = 0;
    for (const TraceRow& row : rows_) {
      Turn turn;
      turn.arrival_s = row.arrival_s;
      turn.prompt_tokens = row.prompt_tokens;
      turn.output_tokens = row.output_tokens;
      if (row.session) {
        uint64_t& held = context[*row.session];
        held += row.prompt_tokens + row.output_tokens;
        if (held > max_positions_)
          fail(row.line, "session " + config::quoted(*row.session) + " reaches " + std::to_string(held) +
                             " tokens of context, beyond the model's max_positions (" + std::to_string(max_positions_) +
                             ")");
        auto [found, added] = by_session.emplace(*row.session, stream.sessions.size());
        if (!added) {
          Session& session = stream.sessions[found->second];
          if (session.request_class != row.request_class)
            fail(row.line, "session " + config::quoted(*row.session) + " changes class from " +
                               class_name(session.request_class) + " to " + class_name(row.request_class));
          session.turns.push_back(turn);
          continue;
        }
      } else if (row.prompt_tokens + row.output_tokens > max_positions_) {
        fail(row.line, "prompt_tokens + output_tokens = " + std::to_string(row.prompt_tokens + row.output_tokens) +
                           " exceeds the model's max_positions (" + std::to_string(max_positions_) + ")");
      }
      Session session;
      session.request_class = row.request_class;
      session.client = row.session ? transport.clients + stream.sessions.size() : single++ % transport.clients;
      session.turns.push_back(turn);
      stream.sessions.push_back(std::move(session));
    }
    return stream;
  }

 private:
  std::string path_;
  uint64_t max_positions_;
  std::vector<TraceRow> rows_;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    const size_t first = cell.find_first_not_of(" \t\r"), last = cell.find_last_not_of(" \t\r");
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> columns = {"arrival_s", "prompt_tokens", "output_tokens", "class"};
  return columns;
}

void read_csv(std::istream& in, TraceReader& reader) {
  std::string line;
  int number = 0;
  std::map<std::string, size_t> column;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++number;
    if (blank(line)) continue;
    header = split_csv(line);
    break;
  }
  if (header.empty()) reader.fail(number, "empty trace: expected a header line naming the columns");
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const std::string& name : required_columns())
    if (!column.count(name))
      reader.fail(number, "missing column " + config::quoted(name) +
                              " in the header (columns: " + config::join(required_columns()) + ", session optional)");
  const bool has_session = column.count("session") > 0;
  while (std::getline(in, line)) {
    ++number;
    if (blank(line)) continue;
    const std::vector<std::string> cells = split_csv(line);
    if (cells.size() != header.size())
      reader.fail(number, "malformed line: " + std::to_string(cells.size()) + " fields, the header has " +
                              std::to_string(header.size()));
    TraceRow row;
    row.line = number;
    row.arrival_s = reader.number(number, "arrival_s", cells[column["arrival_s"]]);
    row.prompt_tokens = reader.tokens(number, "prompt_tokens", cells[column["prompt_tokens"]]);
    row.output_tokens = reader.tokens(number, "output_tokens", cells[column["output_tokens"]]);
    row.request_class = reader.request_class(number, cells[column["class"]]);
    if (has_session && !cells[column["session"]].empty()) row.session = cells[column["session"]];
    reader.add(std::move(row));
  }
}

void read_jsonl(std::istream& in, TraceReader& reader) {
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (blank(line)) continue;
    YAML::Node node;
    try {
      node = YAML::Load(line);  // a JSON object is YAML
    } catch (const YAML::Exception&) {
      reader.fail(number, "malformed line: not a JSON object");
    }
    if (!node.IsMap() || line.find('{') == std::string::npos) reader.fail(number, "malformed line: not a JSON object");
    auto scalar = [&](const std::string& key) {
      const YAML::Node value = node[key];
      if (!value) reader.fail(number, "missing key " + config::quoted(key));
      if (!value.IsScalar()) reader.fail(number, "key " + config::quoted(key) + " expects a number or a string");
      return value.Scalar();
    };
    TraceRow row;
    row.line = number;
    row.arrival_s = reader.number(number, "arrival_s", scalar("arrival_s"));
    row.prompt_tokens = reader.tokens(number, "prompt_tokens", scalar("prompt_tokens"));
    row.output_tokens = reader.tokens(number, "output_tokens", scalar("output_tokens"));
    row.request_class = reader.request_class(number, scalar("class"));
    if (node["session"] && !node["session"].IsNull()) row.session = scalar("session");
    reader.add(std::move(row));
  }
}

// Spreadsheets save UTF-8 CSV with a byte-order mark; it is not part of the first column's name.
void skip_byte_order_mark(std::istream& in) {
  char mark[3] = {};
  in.read(mark, 3);
  if (in.gcount() == 3 && mark[0] == '\xEF' && mark[1] == '\xBB' && mark[2] == '\xBF') return;
  in.clear();
  in.seekg(0);
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

std::string trace_file_problem(const std::string& path) {
  if (!ends_with(path, ".csv") && !ends_with(path, ".jsonl")) return "a trace file must end in .csv or .jsonl";
  // A device or a FIFO (/dev/zero, a pipe) would be read for ever or block: only a regular file is a trace.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return "cannot read the trace file: not a regular file";
  // Opening a regular file does not block; the stream is closed again at once.
  if (!std::ifstream(path)) return "cannot open the trace file";
  return "";
}

RequestStream read_trace(const std::string& path, const TransportSpec& transport, uint64_t max_positions) {
  TraceReader reader(path, max_positions);
  const std::string problem = trace_file_problem(path);
  if (!problem.empty()) reader.fail(0, problem);
  std::ifstream in(path);
  if (!in) reader.fail(0, "cannot open the trace file");
  skip_byte_order_mark(in);
  if (ends_with(path, ".csv"))
    read_csv(in, reader);
  else
    read_jsonl(in, reader);
  RequestStream stream = reader.stream(transport);
  if (stream.sessions.empty()) reader.fail(0, "the trace holds no request");
  return stream;
}

RequestStream request_stream(const ServingSpec& spec, uint64_t max_positions) {
  if (!spec.trace_file.empty()) return read_trace(spec.trace_file, spec.transport, max_positions);
  return synthetic_stream(spec);
}

}  // namespace wafersim::workloads
