// `run --trace` and `analytic --trace`: the Chrome JSON trace of the prefill
// and decode timeline, checked against the JSON results of the same run.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";

struct Traced {
  json result;
  json trace;
};

Traced run_traced(const std::string& command, std::vector<std::string> extra = {}) {
  Scratch scratch;
  const std::string result = (scratch.path() / "result.json").string();
  const std::string trace = (scratch.path() / "trace.json").string();
  std::vector<std::string> args = {command, kTinyDense, "--quiet", "--json", result, "--trace", trace};
  args.insert(args.end(), extra.begin(), extra.end());
  const Outcome outcome = run_wafersim(args);
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return {json::parse(read_all(result)), json::parse(read_all(trace))};
}

// The complete events ("X") of one process, by track (tid), in time order.
std::map<int, std::vector<json>> spans_by_track(const json& trace, int pid) {
  std::map<int, std::vector<json>> tracks;
  for (const json& event : trace["traceEvents"])
    if (event["ph"] == "X" && event["pid"] == pid && event["cat"] != "steps")
      tracks[event["tid"].get<int>()].push_back(event);
  for (auto& [tid, spans] : tracks)
    std::sort(spans.begin(), spans.end(),
              [](const json& a, const json& b) { return a["ts"].get<double>() < b["ts"].get<double>(); });
  return tracks;
}

std::map<int, std::string> track_names(const json& trace, int pid) {
  std::map<int, std::string> names;
  for (const json& event : trace["traceEvents"])
    if (event["ph"] == "M" && event["name"] == "thread_name" && event["pid"] == pid)
      names[event["tid"].get<int>()] = event["args"]["name"].get<std::string>();
  return names;
}

// Spans are well formed, never overlap on a track, and average to `per_layer` of the results.
void check_phase(const json& trace, int pid, const json& per_layer, const char* key, double clock_ghz,
                 size_t iterations) {
  const auto tracks = spans_by_track(trace, pid);
  const auto names = track_names(trace, pid);
  REQUIRE(tracks.size() == per_layer.size());
  size_t r = 0;
  for (const auto& [tid, spans] : tracks) {
    INFO("track " << tid);
    CHECK(names.at(tid) == per_layer[r]["region"].get<std::string>());
    REQUIRE(spans.size() == iterations);
    double sum_us = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      const double begin = spans[i]["ts"], duration = spans[i]["dur"];
      CHECK(duration >= 0);
      sum_us += duration;
      if (i + 1 < spans.size()) CHECK(begin + duration <= spans[i + 1]["ts"].get<double>() + 1e-9);
    }
    const double mean_cycles = sum_us * clock_ghz * 1e3 / double(iterations);
    CHECK(mean_cycles == Approx(per_layer[r][key].get<double>()).epsilon(1e-9));
    ++r;
  }
}

// The events both backends produce: the closed form's step spans are analytic's own.
json without_metadata(const json& trace) {
  json events = json::array();
  for (const json& event : trace["traceEvents"])
    if (event.value("cat", "") != "steps") events.push_back(event);
  return events;
}

}  // namespace

TEST_CASE("run --trace: one span per region and iteration, matching the per-layer results", "[cli][trace]") {
  const Traced traced = run_traced("run", {"--set", "workload.batch=2"});
  const json& metrics = traced.result["metrics"];
  const double clock_ghz = traced.result["experiment"]["clock_ghz"];
  REQUIRE(traced.trace["traceEvents"].is_array());
  REQUIRE(metrics.contains("prefill"));
  check_phase(traced.trace, 1, metrics["prefill"]["per_layer"], "cycles_per_chunk", clock_ghz,
              metrics["prefill"]["chunks"].get<size_t>());
  check_phase(traced.trace, 2, metrics["per_layer"], "cycles_per_token", clock_ghz, metrics["tokens"].get<size_t>());

  // Decode follows the prefill on one time axis.
  const double prefill_us = metrics["prefill"]["cycles"].get<double>() / (clock_ghz * 1e3);
  for (const auto& [tid, spans] : spans_by_track(traced.trace, 2))
    CHECK(spans.front()["ts"].get<double>() >= prefill_us - 1e-9);
  for (const auto& [tid, spans] : spans_by_track(traced.trace, 1))
    CHECK(spans.back()["ts"].get<double>() + spans.back()["dur"].get<double>() <= prefill_us + 1e-9);

  // The counter ends at every token, when the last one left the LM head.
  std::vector<json> counter;
  for (const json& event : traced.trace["traceEvents"])
    if (event["ph"] == "C" && event["pid"] == 2) counter.push_back(event);
  REQUIRE(!counter.empty());
  CHECK(counter.back()["args"]["completed"] == metrics["tokens"]);
  const double total_us = prefill_us + metrics["total_cycles"].get<double>() / (clock_ghz * 1e3);
  CHECK(counter.back()["ts"].get<double>() == Approx(total_us));
  for (size_t i = 1; i < counter.size(); ++i) {
    CHECK(counter[i]["ts"].get<double>() >= counter[i - 1]["ts"].get<double>());
    CHECK(counter[i]["args"]["completed"].get<int>() == counter[i - 1]["args"]["completed"].get<int>() + 1);
  }
}

TEST_CASE("run and analytic traces agree without contention", "[cli][trace]") {
  const Traced run = run_traced("run", {"--set", "sim.contention=false"});
  const Traced analytic = run_traced("analytic", {"--set", "sim.contention=false"});
  CHECK(run.trace["otherData"]["backend"] == "sim");
  CHECK(analytic.trace["otherData"]["backend"] == "analytic");
  CHECK(without_metadata(run.trace) == without_metadata(analytic.trace));
  // And the trace of one backend is deterministic byte for byte.
  CHECK(run_traced("analytic", {"--set", "sim.contention=false"}).trace == analytic.trace);
}

TEST_CASE("analytic nests the closed form's steps of the first token in its first spans", "[cli][trace]") {
  const Traced traced = run_traced("analytic");
  std::map<int, json> first_span;
  for (const auto& [tid, spans] : spans_by_track(traced.trace, 2)) first_span[tid] = spans.front();
  size_t steps = 0;
  for (const json& event : traced.trace["traceEvents"]) {
    if (event.value("cat", "") != "steps") continue;
    ++steps;
    const json& parent = first_span.at(event["tid"].get<int>());
    CHECK(event["ts"].get<double>() >= parent["ts"].get<double>() - 1e-9);
    CHECK(event["ts"].get<double>() + event["dur"].get<double>() <=
          parent["ts"].get<double>() + parent["dur"].get<double>() + 1e-9);
  }
  size_t offered = 0;
  for (const json& region : traced.result["metrics"]["steps"]) offered += region.size();
  CHECK(offered > 0);
  CHECK(steps == offered);
}

TEST_CASE("trace-tokens limits the decode spans and leaves the prefill whole", "[cli][trace]") {
  const Traced whole = run_traced("analytic");
  const Traced window = run_traced("analytic", {"--trace-tokens", "1:3"});
  for (const auto& [tid, spans] : spans_by_track(window.trace, 2)) {
    REQUIRE(spans.size() == 2);
    CHECK(spans[0]["args"]["iteration"] == 1);
    CHECK(spans[1]["args"]["iteration"] == 2);
  }
  CHECK(spans_by_track(window.trace, 1) == spans_by_track(whole.trace, 1));
  // Past the end is clamped to the run's tokens.
  const Traced tail = run_traced("analytic", {"--trace-tokens", "2:"});
  for (const auto& [tid, spans] : spans_by_track(tail.trace, 2))
    CHECK(spans.size() == whole.result["metrics"]["tokens"].get<size_t>() - 2);
}

TEST_CASE("a bad --trace or --trace-tokens exits 2 and leaves no file", "[cli][trace]") {
  Scratch scratch;
  const std::string missing_folder = (scratch.path() / "no-such-folder" / "trace.json").string();
  Outcome outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--trace", missing_folder});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("no-such-folder") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(scratch.path() / "no-such-folder"));

  const std::string trace = (scratch.path() / "trace.json").string();
  for (const char* window : {"3:1", "x:2", "5", "1:1"}) {
    INFO(window);
    outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--trace", trace, "--trace-tokens", window});
    CHECK(outcome.exit_code == 2);
    CHECK_FALSE(std::filesystem::exists(trace));
  }
  outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--trace-tokens", "0:2"});
  CHECK(outcome.exit_code == 2);
  // Nothing but the trace file itself in the folder: no temporary left over.
  CHECK(std::filesystem::is_empty(scratch.path()));
}
