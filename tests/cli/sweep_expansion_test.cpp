// wafersim sweep, driven through the binary: which points a sweep file
// expands to, and how a bad sweep file is refused before anything runs.
#include <set>

#include <catch2/catch.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

Csv run_sweep(const std::string& file, const Scratch& scratch, Outcome* outcome_out = nullptr) {
  const Outcome outcome = run_wafersim({"sweep", sweep_data(file), "--out", (scratch.path() / "out").string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  if (outcome_out) *outcome_out = outcome;
  return read_csv(scratch.path() / "out" / "results.csv");
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs pairs(const Csv& csv, const std::string& a, const std::string& b) {
  Pairs out;
  for (size_t r = 0; r < csv.rows.size(); ++r) out.emplace_back(csv.values(a)[r], csv.values(b)[r]);
  return out;
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a grid runs every combination, the first axis varying slowest", "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("grid.yaml", scratch);
  CHECK(csv.header == std::vector<std::string>{"workload.batch", "hardware.fabric.link_bytes_per_cycle",
                                               "metrics.tokens_per_second", "metrics.cycles_per_token", "status",
                                               "wall_seconds", "error", "config_hash"});
  CHECK(pairs(csv, "workload.batch", "hardware.fabric.link_bytes_per_cycle") ==
        Pairs{{"1", "2"}, {"1", "8"}, {"2", "2"}, {"2", "8"}, {"4", "2"}, {"4", "8"}});
  CHECK(csv.values("status") == std::vector<std::string>(6, "ok"));
}

TEST_CASE("a sweep point gives what the same experiment gives with --set", "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("grid.yaml", scratch);
  const Outcome direct =
      run_wafersim({"analytic", std::string(WAFERSIM_TEST_DATA) + "/good/tiny.yaml", "--set", "workload.batch=2",
                    "--set", "hardware.fabric.link_bytes_per_cycle=8", "--json", "-", "--quiet"});
  REQUIRE(direct.exit_code == 0);
  const nlohmann::json result = nlohmann::json::parse(direct.out);
  const size_t row = 3;  // batch 2, link 8
  REQUIRE(csv.values("workload.batch")[row] == "2");
  CHECK(csv.values("config_hash")[row] == result["config_hash"].get<std::string>());
  CHECK(std::stod(csv.values("metrics.tokens_per_second")[row]) ==
        result["metrics"]["tokens_per_second"].get<double>());
  CHECK(std::stod(csv.values("metrics.cycles_per_token")[row]) == result["metrics"]["cycles_per_token"].get<double>());
}

TEST_CASE("zip pairs the i-th values of every axis", "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("zip.yaml", scratch);
  CHECK(pairs(csv, "workload.batch", "hardware.fabric.link_bytes_per_cycle") ==
        Pairs{{"1", "2"}, {"2", "8"}, {"4", "16"}});
}

TEST_CASE("range includes its stop, counts down with a negative step, and log2 doubles", "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("ranges.yaml", scratch);
  CHECK(csv.values("workload.prompt_tokens") == std::vector<std::string>{"100", "200", "300", "400"});
  CHECK(csv.values("hardware.fabric.link_bytes_per_cycle") == std::vector<std::string>{"2", "4", "8", "16"});
  CHECK(csv.values("hardware.clock_ghz") == std::vector<std::string>{"0.9", "1", "1.1", "1.2"});
  CHECK(csv.values("workload.decode_tokens") == std::vector<std::string>{"40", "30", "20", "10"});
  // The resolved sweep lists the expanded values, so it reruns without the ranges.
  const std::string resolved = read_all(scratch.path() / "out" / "sweep.yaml");
  CHECK_THAT(resolved, Catch::Contains("hardware.clock_ghz: [0.9, 1, 1.1, 1.2]"));
  CHECK_THAT(resolved, Catch::Contains("workload.decode_tokens: [40, 30, 20, 10]"));
}

TEST_CASE("repeat runs each point once per seed, in every seed parameter", "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("seeds.yaml", scratch);
  CHECK(csv.values("workload.batch") == std::vector<std::string>{"1", "1", "1", "2", "2", "2"});
  CHECK(csv.values("repeat.seed") == std::vector<std::string>{"1", "2", "3", "1", "2", "3"});
  const std::vector<std::string> hashes = csv.values("config_hash");
  CHECK(std::set<std::string>(hashes.begin(), hashes.end()).size() == 6);
  const std::string point = read_all(scratch.path() / "out" / "points" / (hashes[2] + ".yaml"));
  CHECK(count(point, "seed: 3") == 1);  // workload.seed
}

TEST_CASE("points that resolve to the same experiment run once", "[cli][sweep]") {
  Scratch scratch;
  Outcome outcome;
  const Csv csv = run_sweep("duplicates.yaml", scratch, &outcome);
  CHECK(csv.values("workload.batch") == std::vector<std::string>{"1", "2"});
  CHECK_THAT(outcome.err, Catch::Contains("2 point(s) resolve to the same experiment as an earlier point"));
  const Outcome base =
      run_wafersim({"analytic", std::string(WAFERSIM_TEST_DATA) + "/good/tiny.yaml", "--json", "-", "--quiet"});
  REQUIRE(base.exit_code == 0);
  CHECK(csv.values("config_hash")[0] == nlohmann::json::parse(base.out)["config_hash"].get<std::string>());
}

TEST_CASE("whole sections by preset name, and a point that does not fit is recorded and the sweep goes on",
          "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("sections.yaml", scratch);
  CHECK(csv.values("model") == std::vector<std::string>{"tiny-dense", "llama3.1-8b", "tiny-moe", "tiny-dense"});
  CHECK(csv.values("hardware.fabric.hop_latency_cycles") == std::vector<std::string>{"1", "1", "1", "3"});
  CHECK(csv.values("status") == std::vector<std::string>{"ok", "does_not_fit", "ok", "ok"});
  // The run itself says which model it ran.
  CHECK(csv.values("experiment.model") == std::vector<std::string>{"tiny-dense", "", "tiny-moe", "tiny-dense"});
  CHECK_THAT(csv.values("error")[1], Catch::StartsWith("does not fit: llama3.1-8b needs"));
  const nlohmann::json record =
      nlohmann::json::parse(read_all(scratch.path() / "out" / "points" / (csv.values("config_hash")[1] + ".json")));
  CHECK(record["exit_code"] == 3);
  CHECK(record["status"] == "does_not_fit");
}

TEST_CASE("a bad sweep file is refused with exit 2 and one line at the sweep file's line, before anything runs",
          "[cli][sweep]") {
  size_t cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(sweep_data("bad"))) {
    const std::string path = entry.path().string();
    std::string expect, at;
    std::istringstream lines(read_all(entry.path()));
    for (std::string line; std::getline(lines, line) && line.rfind("# ", 0) == 0;) {
      if (line.rfind("# expect: ", 0) == 0) expect = line.substr(10);
      if (line.rfind("# at: ", 0) == 0) at = line.substr(6);
    }
    INFO(path);
    REQUIRE_FALSE(expect.empty());
    REQUIRE_FALSE(at.empty());
    Scratch scratch;
    const Outcome outcome = run_wafersim({"sweep", path, "--out", (scratch.path() / "out").string()});
    INFO(outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::StartsWith("error: " + path + ":" + at + ":"));
    CHECK_THAT(outcome.err, Catch::Contains(expect));
    CHECK_FALSE(std::filesystem::exists(scratch.path() / "out"));
    ++cases;
  }
  CHECK(cases >= 12);
}

TEST_CASE("model files named relative to the sweep file are found, and each point file runs on its own",
          "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("model_files.yaml", scratch);
  CHECK(csv.values("experiment.model") == std::vector<std::string>{"tiny-dense", "one-layer", "one-layer"});
  CHECK(csv.values("status") == std::vector<std::string>(3, "ok"));
  const std::string point = (scratch.path() / "out" / "points" / (csv.values("config_hash")[2] + ".yaml")).string();
  const Outcome alone = run_wafersim({"analytic", point, "--json", "-", "--quiet"});
  INFO(alone.err);
  REQUIRE(alone.exit_code == 0);
  CHECK(nlohmann::json::parse(alone.out)["config_hash"] == csv.values("config_hash")[2]);
}

TEST_CASE("a draft model and a serving trace named relative to their files are found from every point file",
          "[cli][sweep]") {
  Scratch scratch;
  const Csv csv = run_sweep("relative_files.yaml", scratch);
  CHECK(csv.values("status") == std::vector<std::string>(3, "ok"));
  auto point_file = [&](size_t row) {
    return (scratch.path() / "out" / "points" / (csv.values("config_hash")[row] + ".yaml")).string();
  };
  // The point files run from anywhere: the draft model, and the trace of the last point, by absolute path.
  const Outcome draft = run_wafersim({"analytic", point_file(0), "--json", "-", "--quiet"});
  INFO(draft.err);
  CHECK(draft.exit_code == 0);
  const Outcome trace = run_wafersim({"serve", point_file(2), "--json", "-", "--quiet"});
  INFO(trace.err);
  CHECK(trace.exit_code == 0);
  CHECK(csv.values("serving.trace_file")[2].front() == '/');
}
