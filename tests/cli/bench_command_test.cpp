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
