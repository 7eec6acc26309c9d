// Same program set, same cycles: two separate processes simulate random traffic
// under contention and must print the same digest, byte for byte. And the
// number of bands the engine splits the rows into moves no cycle without
// contention, and few with it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "sim/engine/engine.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;

namespace {

// The digest a child process prints for `traffic` simulated in `bands` bands.
std::string run_child(const std::string& traffic = "random", uint32_t bands = 5, bool contention = true) {
  char exe[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(length > 0);
  const std::string command =
      fmt::format("WAFERSIM_TEST_TRAFFIC={} WAFERSIM_TEST_BANDS={} WAFERSIM_TEST_CONTENTION={} {} '[.digest]' 2>&1",
                  traffic, bands, contention ? 1 : 0, exe);
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string digest;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    if (std::string(line).rfind("digest:", 0) == 0) digest = line;
  pclose(pipe);
  return digest;
}

double end_cycle(const std::string& digest) {
  const size_t at = digest.find("end ");
  REQUIRE(at != std::string::npos);
  return std::stod(digest.substr(at + 4));
}

}  // namespace

TEST_CASE("traffic digest", "[.digest]") {
  const char* kind = std::getenv("WAFERSIM_TEST_TRAFFIC");
  const char* bands = std::getenv("WAFERSIM_TEST_BANDS");
  const char* contention = std::getenv("WAFERSIM_TEST_CONTENTION");
  REQUIRE(kind != nullptr);
  REQUIRE(bands != nullptr);
  REQUIRE(contention != nullptr);
  sim::TrafficSpec spec;
  spec.traffic = kind;
  spec.grid_width = 48;
  spec.grid_height = 40;
  spec.events = 48 * 40 * 12 * 3;  // three iterations of four rounds
  spec.seed = 7;
  const sim::SyntheticTraffic traffic = sim::make_traffic(spec);
  sim::EngineOptions options;
  options.bands = uint32_t(std::stoul(bands));  // several, so that messages cross SystemC ports
  options.contention = std::string(contention) == "1";
  const sim::EngineResult result =
      sim::run_programs(testing::wse3_like(48, 40), traffic.programs, sim::SteadyInputs(), options);
  REQUIRE(result.events == traffic.events_per_iteration * traffic.programs.iterations);
  std::cout << fmt::format("digest: end {} events {} hops {} link busy peak {:.17g} mean {:.17g}\n", result.end_cycle,
                           result.events, result.link_hops, result.link_busy_peak, result.link_busy_mean);
}

TEST_CASE("two processes simulating the same random traffic agree to the cycle", "[engine][determinism]") {
  const std::string first = run_child();
  const std::string second = run_child();
  INFO(first);
  REQUIRE(!first.empty());
  CHECK(first == second);
}

// A band is only the engine's unit of work. Without contention no event
// depends on another's order within a cycle, so the number of bands moves no
// cycle. With it, messages that reach one link in the same cycle take it in
// the order their events run, which the bands decide: the band count may move
// a figure by such ties (docs/ARCHITECTURE.md, "Determinism").
TEST_CASE("the number of bands moves no cycle without contention and few with it", "[engine][determinism]") {
  for (const std::string traffic : {"random", "multicast"}) {
    const std::string one = run_child(traffic, 1, false);
    INFO(traffic << " without contention, one band: " << one);
    REQUIRE(!one.empty());
    for (uint32_t bands : {2u, 7u, 40u}) CHECK(run_child(traffic, bands, false) == one);
  }
  const double one = end_cycle(run_child("random", 1));
  for (uint32_t bands : {2u, 7u, 40u}) {
    const double other = end_cycle(run_child("random", bands));
    INFO(bands << " bands: " << other << " cycles, one band: " << one);
    CHECK(std::abs(other / one - 1) < 0.05);
  }
}
