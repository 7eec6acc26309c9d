#include "sim/cli/sweep/results.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "models/config/text.h"

namespace wafersim::cli::sweep {

namespace {

std::string join_row(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t i = 0; i < fields.size(); ++i) row += (i ? "," : "") + csv_field(fields[i]);
  return row + "\n";
}

const nlohmann::json* find_path(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* node = &document;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    const auto found = node->find(key);
    if (found == node->end()) return nullptr;
    node = &*found;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

}  // namespace

nlohmann::json point_record(const SweepPlan& plan, const Point& point, const std::string& engine,
                            const PointOutcome& outcome) {
  nlohmann::json axes = nlohmann::json::object();
  for (size_t c = 0; c < plan.columns.size(); ++c) axes[plan.columns[c]] = point.values[c];
  return {{"config_hash", point.hash},
          {"engine", engine},
          {"axes", axes},
          {"status", outcome.status},
          {"exit_code", outcome.exit_code},
          {"error", outcome.error},
          {"wall_seconds", outcome.wall_seconds},
          {"result", outcome.result}};
}

std::optional<nlohmann::json> read_point_record(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json record = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("status") || !record.contains("engine")) return std::nullopt;
  return record;
}

std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_path_text(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* value = find_path(document, path);
  if (!value || value->is_null()) return "";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_float()) return config::format_number(value->get<double>());
  return value->dump();  // integers, true/false, and groups as compact JSON
}

bool has_json_path(const nlohmann::json& document, const std::string& path) {
  return find_path(document, path) != nullptr;
}

std::string csv_header(const SweepPlan& plan, const std::vector<std::string>& metrics) {
  std::vector<std::string> fields = plan.columns;
  fields.insert(fields.end(), metrics.begin(), metrics.end());
  for (const char* tail : {"status", "wall_seconds", "error", "config_hash"}) fields.push_back(tail);
  return join_row(fields);
}

std::string csv_row(const Point& point, const nlohmann::json& record, const std::vector<std::string>& metrics) {
  std::vector<std::string> fields = point.cells;
  const nlohmann::json& result = record.value("result", nlohmann::json());
  for (const std::string& metric : metrics) fields.push_back(json_path_text(result, metric));
  fields.push_back(record.value("status", ""));
  fields.push_back(fmt::format("{:.3f}", record.value("wall_seconds", 0.0)));
  fields.push_back(record.value("error", ""));
  fields.push_back(point.hash);
  return join_row(fields);
}

std::string csv_row_without_record(const Point& point, const std::vector<std::string>& metrics,
                                   const std::string& status, const std::string& error) {
  std::vector<std::string> fields = point.cells;
  fields.insert(fields.end(), metrics.size(), "");
  for (const std::string& tail : {status, std::string(), error, point.hash}) fields.push_back(tail);
  return join_row(fields);
}

}  // namespace wafersim::cli::sweep
