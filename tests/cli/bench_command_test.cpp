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
