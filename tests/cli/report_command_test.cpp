// wafersim report: one self-contained page of results, and one line naming the
// file (exit 2, no page written) for anything it cannot read. The page in a
// browser is tests/python/report_page_check.py.
#include <cstdio>
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "run_json.h"

using namespace wafersim::testing;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
const std::string kTinyServe = std::string(WAFERSIM_TEST_DATA) + "/serving/tiny-serve.yaml";

// `value` with `decimals` digits, as the page prints it.
std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// The page of `inputs`, requiring success and silence.
std::string report_of(const Scratch& scratch, const std::vector<std::string>& inputs) {
  const std::string page = (scratch.path() / "report.html").string();
  std::vector<std::string> args = {"report"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"-o", page});
  const Outcome outcome = run_wafersim(args);
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.err.empty());
  return read_all(page);
}

}  // namespace

TEST_CASE("report draws a decode and a serve result on one page that loads nothing", "[cli][report]") {
  Scratch scratch;
  const nlohmann::json decode = run_json({"analytic", kTinyDense});
  const nlohmann::json serve = run_json({"serve", kTinyServe});
  const std::string page =
      report_of(scratch, {scratch.write("analytic.json", decode.dump()), scratch.write("serve.json", serve.dump())});
  for (const char* title : {"Inputs", "Metrics", "Critical path", "Per layer", "Per step", "Energy", "Serving"})
    CHECK_THAT(page, Catch::Contains(std::string("<h2>") + title + "</h2>"));
  CHECK_THAT(page, !Catch::Contains("<h2>Why</h2>") && !Catch::Contains("<h2>Search</h2>"));
  // The figures are the result's, as the terminal table prints them.
  CHECK_THAT(page, Catch::Contains("<td class=\"n\">" + fixed(decode["metrics"]["tokens_per_second"], 1) + "</td>"));
  CHECK_THAT(page, Catch::Contains("<td class=\"n\">" + fixed(serve["serving"]["ttft_ms"]["p99"], 3) + "</td>"));
  // One rectangle per region of the per-layer chart, its exact value in its tooltip.
  const nlohmann::json& per_layer = decode["metrics"]["per_layer"];
  for (const nlohmann::json& region : per_layer)
    CHECK_THAT(page, Catch::Contains("<title>" + region["region"].get<std::string>() + ": " +
                                     fixed(region["cycles_per_token"], 0) + " cycles per token</title>"));
  // Self-contained: no script, nothing fetched (the only URL is SVG's namespace).
  CHECK_THAT(page, !Catch::Contains("<script") && !Catch::Contains("src=") && !Catch::Contains("href=\"http"));
  CHECK_THAT(page, Catch::Contains("Content-Security-Policy"));
}

TEST_CASE("report draws the steps of the prefill's slowest region, from run as from analytic", "[cli][report]") {
  Scratch scratch;
  const nlohmann::json run = run_json({"run", kTinyDense, "--quiet"});
  REQUIRE_FALSE(run["metrics"].contains("steps"));  // run has no account of decode's steps
  const std::string page = report_of(scratch, {scratch.write("run.json", run.dump())});
  CHECK_THAT(page, Catch::Contains("<h2>Per step</h2>"));
  // The region that takes a chunk longest, and one bar per step of it with its cycles.
  std::string slowest;
  double longest = -1;
  for (const nlohmann::json& region : run["metrics"]["prefill"]["per_layer"])
    if (region["cycles_per_chunk"].get<double>() > longest) {
      longest = region["cycles_per_chunk"];
      slowest = region["region"];
    }
  CHECK_THAT(page, Catch::Contains(": prefill, " + slowest + " (the slowest region), first chunk</h3>"));
  size_t bars = 0;
  for (const nlohmann::json& step : run["metrics"]["prefill"]["steps_per_region"])
    if (step["region"] == slowest) {
      ++bars;
      CHECK_THAT(page, Catch::Contains("<title>" + step["step"].get<std::string>() + ": " + fixed(step["cycles"], 0) +
                                       " cycles</title>"));
    }
  CHECK(bars > 3);
}

TEST_CASE("report shows a result's explain object and a search's Pareto front", "[cli][report]") {
  Scratch scratch;
  nlohmann::json decode = run_json({"analytic", kTinyDense});
  decode["explain"] = {{"latency_bound_by", "reduce tree depth"},
                       {"knobs", {{{"knob", "mapping.reduce_k: 3"}, {"effect", "-8 %"}}}}};
  // search.json as `wafersim search` writes it: its front, default and best points.
  auto point = [](const std::string& k, nlohmann::json objective, nlohmann::json wafers) {
    return nlohmann::json{{"config_hash", "h" + k},
                          {"values", {{"mapping.reduce_k", k}}},
                          {"objective", objective},
                          {"pareto", wafers},
                          {"feasible", !objective.is_null()},
                          {"status", "ok"},
                          {"round", 0},
                          {"file", "points/h" + k + ".yaml"}};
  };
  const nlohmann::json search = {
      {"experiment", "quickstart.yaml"},
      {"strategy", "coordinate"},
      {"engine", "analytic"},
      {"objective", {{"name", "tokens_per_second_per_user"}, {"path", "metrics.tokens_per_second_per_user"}}},
      {"pareto_against", {{"name", "wafers"}, {"path", "experiment.wafers"}}},
      {"evaluated", 12},
      {"version", "0.1.0"},
      {"default", point("2", 5000.0, 1)},
      {"best", point("3", 6000.0, 1)},
      {"gain_over_default", 1.2},
      {"pareto", {point("3", 6000.0, 1), point("4", 6500.0, 2), point("5", nullptr, 4)}},
      {"default_on_front", false}};
  const std::string page =
      report_of(scratch, {scratch.write("explained.json", decode.dump()), scratch.write("search.json", search.dump())});
  CHECK_THAT(page, Catch::Contains("<h2>Why</h2>") && Catch::Contains("reduce tree depth") &&
                       Catch::Contains("mapping.reduce_k: 3"));
  CHECK_THAT(page, Catch::Contains("<h2>Search</h2>") && Catch::Contains("search of quickstart.yaml by coordinate"));
  // Two feasible points of the front (in colour) and the default; the point without a figure is not drawn.
  CHECK_THAT(page, Catch::Contains("<title>front: mapping.reduce_k=3: 1, 6000</title>") &&
                       Catch::Contains("<title>front: mapping.reduce_k=4: 2, 6500</title>") &&
                       Catch::Contains("<title>default: mapping.reduce_k=2: 1, 5000</title>"));
  CHECK(count_of(page, "<circle") == 3);
  CHECK_THAT(page, Catch::Contains("<td>mapping.reduce_k=5</td><td class=\"n\">—</td>"));
}

TEST_CASE("report draws a repaired wafer's physical grid by category, with a legend", "[cli][report][defects]") {
  Scratch scratch;
  const std::string maps = (scratch.path() / "maps").string();
  const Outcome mapped =
      run_wafersim({"map", kTinyDense, "--quiet", "--heatmaps", maps, "--set", "hardware.spares.rows=2", "--set",
                    "hardware.spares.columns=2", "--set",
                    "hardware.defects.map=" + std::string(WAFERSIM_TEST_DATA) + "/defects/tiny-map.yaml"});
  REQUIRE(mapped.exit_code == 0);
  const std::string result = scratch.write("analytic.json", run_json({"analytic", kTinyDense}).dump());
  const std::string page = report_of(scratch, {result, "--heatmaps", maps});
  CHECK_THAT(page, Catch::Contains("<h3>physical_tile, wafer 0</h3>"));
  // The legend names each category and counts its tiles (18 x 18: 256 logical, 3 dead, 1 dead link, the rest retired).
  for (const char* entry : {"0: logical tile (256 tiles)", "1: dead tile (3 tiles)", "2: dead link (1 tiles)",
                            "3: retired (64 tiles)", "4: unused spare (0 tiles)"})
    CHECK_THAT(page, Catch::Contains(std::string("<title>") + entry + "</title>"));
}

TEST_CASE("report refuses what is not a result in one line naming the file, and writes no page", "[cli][report]") {
  Scratch scratch;
  nlohmann::json wrong_type = run_json({"analytic", kTinyDense});
  wrong_type["metrics"]["tokens_per_second"] = "fast";
  const std::string folder = (scratch.path() / "a folder").string();
  std::filesystem::create_directories(folder);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {scratch.write("text.json", "hello"), "not JSON"},
      {scratch.write("array.json", "[1, 2]"), "not a wafersim result"},
      {scratch.write("other.json", R"({"version": "0.1.0", "rows": []})"), "not a wafersim result"},
      {scratch.write("refusal.json", R"({"fits": false, "error": "x", "version": "0.1.0"})"), "does not fit"},
      {scratch.write("typed.json", wrong_type.dump()), "metrics.tokens_per_second is string, not a number"},
      {(scratch.path() / "missing.json").string(), "No such file"},
      {folder, "folder"}};
  const std::string page = scratch.write("report.html", "the previous page");
  for (const auto& [input, why] : cases) {
    const Outcome outcome = run_wafersim({"report", input, "-o", page});
    INFO(input << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(input + ": ") && Catch::Contains(why));
    CHECK(read_all(page) == "the previous page");
  }
  // A --heatmaps folder without its index names the index it looked for.
  const Outcome outcome = run_wafersim({"report", scratch.write("ok.json", wrong_type.dump()), "--heatmaps", folder,
                                        "-o", (scratch.path() / "new.html").string()});
  CHECK(outcome.exit_code == 2);
  CHECK_THAT(outcome.err, Catch::Contains(folder + "/heatmaps.json"));
  CHECK_FALSE(std::filesystem::exists(scratch.path() / "new.html"));
}

TEST_CASE("report refuses an output that is a FIFO or a folder without blocking on it", "[cli][report][output]") {
  Scratch scratch;
  const std::string result = scratch.write("analytic.json", run_json({"analytic", kTinyDense}).dump());
  const std::string fifo = (scratch.path() / "fifo.html").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Bounded, so a write that blocked on the FIFO fails the test (exit 124) instead of hanging it.
  const Outcome to_fifo = run_shell("timeout 600 " + shell_quoted(WAFERSIM_BINARY) + " report " + shell_quoted(result) +
                                    " -o " + shell_quoted(fifo));
  CHECK(to_fifo.exit_code == 2);
  CHECK(is_one_line(to_fifo.err));
  CHECK_THAT(to_fifo.err, Catch::Contains(fifo) && Catch::Contains("FIFO"));

  const Outcome to_folder = run_wafersim({"report", result, "-o", scratch.path().string()});
  CHECK(to_folder.exit_code == 2);
  CHECK(is_one_line(to_folder.err));
  CHECK_THAT(to_folder.err, Catch::Contains(scratch.path().string()) && Catch::Contains("directory"));
}
