// `wafersim compare` as a user drives it: the wafer's figures are analytic's,
// bad --against values and models the GPUs cannot hold end in one line and
// their exit codes, and no output file is left behind by a refusal.
#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
const std::string kQuickstart = std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/quickstart.yaml";

json run_json_of(const std::vector<std::string>& args) {
  const Outcome outcome = run_wafersim(args);
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out);
}

}  // namespace

TEST_CASE("compare reports the wafer's analytic figures beside the GPU reference", "[cli][compare]") {
  const Outcome compare = run_wafersim({"compare", kQuickstart, "--against", "h100x8", "--json", "-"});
  REQUIRE(compare.exit_code == 0);
  const json document = json::parse(compare.out);
  const Outcome analytic = run_wafersim({"analytic", kQuickstart, "--json", "-", "--quiet"});
  REQUIRE(analytic.exit_code == 0);
  const json metrics = json::parse(analytic.out)["metrics"];

  // The wafer side is `analytic`'s own result, not a second computation.
  CHECK(document["wafer"]["tokens_per_s_per_user"].get<double>() ==
        Approx(metrics["tokens_per_second_per_user"].get<double>()));
  CHECK(document["wafer"]["per_token_latency_us"].get<double>() ==
        Approx(metrics["per_token_latency_us"]["mean"].get<double>()));
  CHECK(document["wafer"]["time_to_first_token_ms"].get<double>() ==
        Approx(metrics["time_to_first_token_us"]["mean"].get<double>() / 1e3));
  // The wafer's power is its energy model's; 8 H100s draw their TDP.
  CHECK(document["wafer"]["power_w"].get<double>() > 0);
  CHECK(document["gpu"]["power_w"].get<double>() == Approx(8 * 700.0));
  CHECK(document["gpu"]["system"] == "h100x8");
  CHECK(document["gpu"]["tokens_per_s_per_user"].get<double>() > 0);
  CHECK(document["gpu"]["time_to_first_token_ms"].get<double>() > 0);

  // The table goes to stderr with --json -, and names its units.
  for (const char* name : {"tokens_per_s_per_user", "per_token_latency_us", "time_to_first_token_ms",
                           "tokens_per_s_per_kw", "not a GPU simulation"})
    CHECK(compare.err.find(name) != std::string::npos);
}

TEST_CASE("compare takes the wafer's power and energy from the energy model, its rating from the preset",
          "[cli][compare]") {
  const json analytic = run_json_of({"analytic", kQuickstart, "--json", "-", "--quiet"});
  const json document = run_json_of({"compare", kQuickstart, "--against", "h100x8", "--json", "-", "--quiet"});
  const json& energy = analytic["metrics"]["energy"];
  CHECK(document["wafer"]["power_w"].get<double>() == Approx(energy["average_power_watts"].get<double>()));
  CHECK(document["wafer"]["joules_per_token"].get<double>() == Approx(energy["joules_per_token"].get<double>()));
  CHECK(document["wafer"]["rated_power_w"].get<double>() == Approx(23000.0));  // a CS-3
  CHECK(document["wafer"]["power_w"].get<double>() < 23000.0);

  // The tiny wafer has no published rating: n/a for it, the energy model's figures all the same.
  const Outcome outcome = run_wafersim({"compare", kTinyDense, "--against", "a100x1"});
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.out.find("n/a") != std::string::npos);
  const json tiny = run_json_of({"compare", kTinyDense, "--against", "a100x1", "--json", "-", "--quiet"});
  CHECK(tiny["wafer"]["rated_power_w"].is_null());
  CHECK(tiny["wafer"]["tokens_per_s_per_kw"].get<double>() > 0);
  CHECK(tiny["wafer"]["joules_per_token"].get<double>() > 0);
}

TEST_CASE("a bad --against is one line on stderr and exit 2", "[cli][compare]") {
  for (const char* bad : {"h200x8", "b200", "b200x0", "b200x100", "8xb200"}) {
    INFO(bad);
    const Outcome outcome = run_wafersim({"compare", kTinyDense, "--against", bad});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK(outcome.err.find("--against") != std::string::npos);
    CHECK(outcome.out.empty());
  }
  const Outcome missing = run_wafersim({"compare", kTinyDense});
  CHECK(missing.exit_code == 2);
  CHECK(is_one_line(missing.err));
}

TEST_CASE("a model the GPUs cannot hold exits 3 with one line and writes no file", "[cli][compare]") {
  Scratch scratch;
  const std::string json_path = (scratch.path() / "out.json").string();
  const Outcome outcome = run_wafersim(
      {"compare", kQuickstart, "--set", "model=llama3.1-405b", "--against", "a100x1", "--json", json_path});
  CHECK(outcome.exit_code == 3);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("a100x1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(json_path));
}
