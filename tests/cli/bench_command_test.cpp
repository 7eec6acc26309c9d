// wafersim bench engine: the documented JSON keys, and counts that follow from the traffic.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

TEST_CASE("bench engine reports its figures for each kind of traffic", "[cli][bench]") {
  for (const char* traffic : {"neighbour", "random", "multicast"}) {
    INFO(traffic);
    const Outcome outcome = run_wafersim(
        {"bench", "engine", "--grid", "32x16", "--traffic", traffic, "--events", "20000", "--json", "-", "--quiet"});
    REQUIRE(outcome.exit_code == 0);
    const nlohmann::json result = nlohmann::json::parse(outcome.out);
    for (const char* key : {"tiles", "build_seconds", "events", "events_per_second", "link_hops",
                            "link_hops_per_second", "peak_rss_bytes", "rss_bytes_per_tile"})
      CHECK(result.contains(key));
    CHECK(result["tiles"] == 32 * 16);
    CHECK(result["events"].get<uint64_t>() >= 20000);
    CHECK(result["link_hops"].get<uint64_t>() > 0);
  }
}

TEST_CASE("bench engine refuses a malformed grid", "[cli][bench]") {
  const Outcome outcome = run_wafersim({"bench", "engine", "--grid", "32by16"});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
}

TEST_CASE("bench engine applies --set to the hardware and refuses what is not a hardware parameter", "[cli][bench]") {
  auto end_cycle = [](const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"bench", "engine", "--grid", "16x16", "--json", "-", "--quiet"};
    args.insert(args.end(), sets.begin(), sets.end());
    const Outcome outcome = run_wafersim(args);
    INFO(outcome.err);
    REQUIRE(outcome.exit_code == 0);
    return nlohmann::json::parse(outcome.out)["end_cycle"].get<uint64_t>();
  };
  CHECK(end_cycle({"--set", "hardware.fabric.hop_latency_cycles=50"}) > end_cycle({}));
  const Outcome refused = run_wafersim({"bench", "engine", "--grid", "16x16", "--set", "mapping.attention=grid"});
  CHECK(refused.exit_code == 2);
  CHECK(is_one_line(refused.err));
  CHECK(refused.err.find("mapping.attention") != std::string::npos);
}

TEST_CASE("bench parallelism profiles an experiment's decode and prefill with the same counts every run",
          "[cli][bench]") {
  const std::string experiment = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
  auto profile = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"bench", "parallelism", experiment, "--json", "-", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome outcome = run_wafersim(args);
    INFO(outcome.err);
    REQUIRE(outcome.exit_code == 0);
    return nlohmann::json::parse(outcome.out);
  };
  const nlohmann::json decode = profile({});
  CHECK(decode["phase"] == "decode");
  uint64_t band_sum = 0;
  for (uint64_t events : decode["band_events"]) band_sum += events;
  CHECK(band_sum == decode["events"].get<uint64_t>());
  size_t interleaved = 0;
  for (const nlohmann::json& split : decode["splits"]) {
    INFO(split.dump());
    for (const char* key : {"critical_events", "event_bound_speedup", "barriers_seconds", "cross_thread_messages",
                            "handoffs_seconds", "projected_speedup"})
      CHECK(split.contains(key));
    if (split["threads"] == 1) CHECK(split["critical_events"] == decode["events"]);
    if (split["partition"] != "bands") ++interleaved;
  }
  CHECK(interleaved == 8);  // rows and columns interleaved over 2, 4, 8 and 16 threads

  // What the profile counts is the simulation's, not the machine's.
  const nlohmann::json again = profile({});
  CHECK(again["events"] == decode["events"]);
  for (size_t i = 0; i < decode["splits"].size(); ++i)
    CHECK(again["splits"][i]["critical_events"] == decode["splits"][i]["critical_events"]);

  const nlohmann::json prefill = profile({"--prefill"});
  CHECK(prefill["phase"] == "prefill");
  CHECK(prefill["events"] != decode["events"]);

  const Outcome refused =
      run_wafersim({"bench", "parallelism", experiment, "--prefill", "--set", "workload.prefill=false"});
  CHECK(refused.exit_code == 2);
  CHECK(is_one_line(refused.err));
  CHECK(refused.err.find("workload.prefill") != std::string::npos);
}
