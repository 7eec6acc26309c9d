#include "sim/cli/csv_tables.h"

#include <vector>

#include "sim/reports/output.h"

namespace wafersim::cli {

using reports::make_folder;
using reports::write_text_atomically;

namespace {

// A cell: strings quoted when they hold a comma, quote or line break; numbers
// as JSON prints them (shortest text that reads back to the same value).
std::string cell(const nlohmann::json& value) {
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv(const std::vector<std::string>& header, const std::vector<std::vector<nlohmann::json>>& rows) {
  std::string out;
  for (size_t c = 0; c < header.size(); ++c) out += (c ? "," : "") + header[c];
  out += "\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + cell(row[c]);
    out += "\n";
  }
  return out;
}

}  // namespace

void write_csv_tables(const std::string& folder, const nlohmann::json& document) {
  const nlohmann::json& metrics = document.at("metrics");
  const uint64_t batch = document.at("/experiment/batch"_json_pointer).get<uint64_t>();
  std::vector<std::pair<std::string, std::string>> files;

  std::vector<std::vector<nlohmann::json>> rows;
  const nlohmann::json& latencies = metrics.at("per_token");
  for (uint64_t n = 0; n < latencies.size(); ++n) rows.push_back({n, n % batch, n / batch, latencies[n]});
  files.emplace_back("per_token.csv", csv({"iteration", "sequence", "token", "latency_us"}, rows));

  rows.clear();
  for (const nlohmann::json& layer : metrics.at("per_layer"))
    rows.push_back({layer["region"], layer["cycles_per_token"]});
  files.emplace_back("per_layer.csv", csv({"region", "cycles_per_token"}, rows));

  if (metrics.contains("prefill")) {
    rows.clear();
    for (const nlohmann::json& layer : metrics["prefill"].at("per_layer"))
      rows.push_back({layer["region"], layer["cycles_per_chunk"]});
    files.emplace_back("prefill_per_layer.csv", csv({"region", "cycles_per_chunk"}, rows));
    rows.clear();
    for (const nlohmann::json& step : metrics["prefill"].at("steps_per_region"))
      rows.push_back({step["region"], step["step"], step["cycles"]});
    files.emplace_back("prefill_steps.csv", csv({"region", "step", "cycles"}, rows));
  }
  if (metrics.contains("steps_per_region")) {
    rows.clear();
    for (const nlohmann::json& step : metrics["steps_per_region"])
      rows.push_back({step["region"], step["step"], step["cycles"]});
    files.emplace_back("steps.csv", csv({"region", "step", "cycles"}, rows));
  }

  // Where each phase's energy went, in joules over the phase and per token.
  rows.clear();
  for (const auto& [phase, pointer] :
       {std::pair<std::string, nlohmann::json::json_pointer>{"decode", "/energy"_json_pointer},
        {"prefill", "/prefill/energy"_json_pointer}}) {
    if (!metrics.contains(pointer)) continue;
    const nlohmann::json& energy = metrics.at(pointer);
    for (const char* part : {"compute", "sram", "fabric", "offwafer", "static"})
      rows.push_back({phase, part, energy.at("breakdown").at(part)});
    rows.push_back({phase, "total", energy.at("total_joules")});
  }
  if (!rows.empty()) files.emplace_back("energy.csv", csv({"phase", "component", "joules"}, rows));

  make_folder(folder);
  for (const auto& [name, text] : files) write_text_atomically(folder + "/" + name, text);
}

}  // namespace wafersim::cli
