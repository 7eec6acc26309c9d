// Same program set, same cycles: two separate processes simulate random traffic
// under contention and must print the same digest, byte for byte.
#include <cstdio>
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

std::string run_child() {
  char exe[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(length > 0);
  const std::string command = std::string(exe) + " '[.digest]' 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string digest;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    if (std::string(line).rfind("digest:", 0) == 0) digest = line;
  pclose(pipe);
  return digest;
}

}  // namespace

TEST_CASE("random traffic digest", "[.digest]") {
  sim::TrafficSpec spec;
  spec.traffic = "random";
  spec.grid_width = 48;
  spec.grid_height = 40;
  spec.events = 48 * 40 * 12 * 3;  // three iterations of four rounds
  spec.seed = 7;
  const sim::SyntheticTraffic traffic = sim::make_traffic(spec);
  sim::EngineOptions options;
  options.bands = 5;  // several bands, so messages cross SystemC ports
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
