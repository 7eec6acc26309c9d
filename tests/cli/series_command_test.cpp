// metrics.per_token, metrics.steps_per_region and --csv DIR: the per-token,
// per-layer and per-step series, checked against the summaries of the same result.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";

// Rows of a CSV file of plain cells (no quoting needed for these tables), header first.
std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(read_all(path));
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream cellstream(line);
    for (std::string cell; std::getline(cellstream, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

struct Series {
  json result;
  std::filesystem::path csv;
};

Series run_series(const Scratch& scratch, const std::string& command) {
  const std::string result = (scratch.path() / (command + ".json")).string();
  const std::filesystem::path csv = scratch.path() / (command + "-csv");
  const Outcome outcome = run_wafersim({command, kTinyDense, "--quiet", "--set", "workload.batch=2", "--set",
                                        "workload.prefill=true", "--json", result, "--csv", csv.string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return {json::parse(read_all(result)), csv};
}

void check_per_token(const json& result) {
  const json& metrics = result["metrics"];
  const json& per_token = metrics["per_token"];
  const uint64_t batch = result["experiment"]["batch"], decode_tokens = result["experiment"]["decode_tokens"];
  REQUIRE(per_token.size() == batch * decode_tokens);
  CHECK(per_token.size() == metrics["tokens"].get<size_t>());
  std::vector<double> latencies = per_token.get<std::vector<double>>();
  double sum = 0;
  for (double latency : latencies) sum += latency;
  CHECK(sum / double(latencies.size()) == Approx(metrics["per_token_latency_us"]["mean"].get<double>()));
  std::sort(latencies.begin(), latencies.end());
  CHECK(latencies.back() == metrics["per_token_latency_us"]["max"].get<double>());
  CHECK(latencies[latencies.size() / 2 - 1] == metrics["per_token_latency_us"]["p50"].get<double>());
  // Iterations in order: the sequences' first tokens, then their later ones.
  const double clock_ghz = result["experiment"]["clock_ghz"];
  double total_us = 0;
  for (uint64_t n = 0; n < batch; ++n) total_us = std::max(total_us, per_token[n].get<double>());
  CHECK(total_us <= metrics["total_cycles"].get<double>() / clock_ghz / 1e3 + 1e-9);
}

void check_csv(const Series& series) {
  const json& metrics = series.result["metrics"];
  const auto tokens = read_csv(series.csv / "per_token.csv");
  REQUIRE(tokens.size() == metrics["per_token"].size() + 1);
  CHECK(tokens[0] == std::vector<std::string>{"iteration", "sequence", "token", "latency_us"});
  for (size_t n = 1; n < tokens.size(); ++n) {
    CHECK(std::stoull(tokens[n][0]) == n - 1);
    CHECK(std::stoull(tokens[n][1]) == (n - 1) % 2);
    CHECK(std::stoull(tokens[n][2]) == (n - 1) / 2);
    CHECK(std::stod(tokens[n][3]) == metrics["per_token"][n - 1].get<double>());  // printed to round-trip
  }
  const auto layers = read_csv(series.csv / "per_layer.csv");
  REQUIRE(layers.size() == metrics["per_layer"].size() + 1);
  CHECK(layers[0] == std::vector<std::string>{"region", "cycles_per_token"});
  for (size_t r = 1; r < layers.size(); ++r) {
    CHECK(layers[r][0] == metrics["per_layer"][r - 1]["region"].get<std::string>());
    CHECK(std::stod(layers[r][1]) == metrics["per_layer"][r - 1]["cycles_per_token"].get<double>());
  }
  const auto prefill = read_csv(series.csv / "prefill_per_layer.csv");
  CHECK(prefill.size() == metrics["prefill"]["per_layer"].size() + 1);
  // The prefill's steps, from either backend: every prefill region's, in order.
  const json& prefill_steps = metrics["prefill"]["steps_per_region"];
  std::vector<std::string> regions;
  for (const json& step : prefill_steps) {
    CHECK(step["cycles"].get<uint64_t>() < metrics["prefill"]["cycles"].get<uint64_t>());
    if (regions.empty() || regions.back() != step["region"]) regions.push_back(step["region"]);
  }
  REQUIRE(regions.size() == metrics["prefill"]["per_layer"].size());
  for (size_t r = 0; r < regions.size(); ++r) CHECK(regions[r] == metrics["prefill"]["per_layer"][r]["region"]);
  const auto prefill_rows = read_csv(series.csv / "prefill_steps.csv");
  REQUIRE(prefill_rows.size() == prefill_steps.size() + 1);
  CHECK(prefill_rows[0] == std::vector<std::string>{"region", "step", "cycles"});
  for (size_t s = 1; s < prefill_rows.size(); ++s) {
    CHECK(prefill_rows[s][1] == prefill_steps[s - 1]["step"].get<std::string>());
    CHECK(std::stoull(prefill_rows[s][2]) == prefill_steps[s - 1]["cycles"].get<uint64_t>());
  }
  for (const auto& entry : std::filesystem::directory_iterator(series.csv))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
}

}  // namespace

TEST_CASE("run: per_token has every token in order and --csv holds the same series", "[cli][csv]") {
  Scratch scratch;
  // An old table of the same name is replaced.
  std::filesystem::create_directories(scratch.path() / "run-csv");
  scratch.write("run-csv/per_token.csv", "old");
  const Series series = run_series(scratch, "run");
  check_per_token(series.result);
  check_csv(series);
  CHECK_FALSE(series.result["metrics"].contains("steps_per_region"));
  CHECK_FALSE(std::filesystem::exists(series.csv / "steps.csv"));  // run has no account of its steps
}

TEST_CASE("analytic: every region's steps in the JSON and in steps.csv", "[cli][csv]") {
  Scratch scratch;
  const Series series = run_series(scratch, "analytic");
  check_per_token(series.result);
  check_csv(series);
  const json& metrics = series.result["metrics"];
  const json& steps = metrics["steps_per_region"];
  // Every region has its steps, and they agree with the per-kind steps of metrics.steps.
  std::vector<std::string> regions;
  for (const json& step : steps)
    if (std::find(regions.begin(), regions.end(), step["region"]) == regions.end()) regions.push_back(step["region"]);
  REQUIRE(regions.size() == metrics["per_layer"].size());
  for (size_t r = 0; r < regions.size(); ++r) CHECK(regions[r] == metrics["per_layer"][r]["region"]);
  for (const auto& [region, kind_steps] : metrics["steps"].items()) {
    std::vector<json> same;
    for (const json& step : steps)
      if (step["region"] == region) same.push_back({{"step", step["step"]}, {"cycles", step["cycles"]}});
    CHECK(json(same) == kind_steps);
  }
  const auto rows = read_csv(series.csv / "steps.csv");
  REQUIRE(rows.size() == steps.size() + 1);
  CHECK(rows[0] == std::vector<std::string>{"region", "step", "cycles"});
  for (size_t s = 1; s < rows.size(); ++s) {
    CHECK(rows[s][0] == steps[s - 1]["region"].get<std::string>());
    CHECK(rows[s][1] == steps[s - 1]["step"].get<std::string>());
    CHECK(std::stoull(rows[s][2]) == steps[s - 1]["cycles"].get<uint64_t>());
  }
}
