// serve --capacity on the coding assistant (workloads/experiments/serving):
// the rate it reports meets the SLO and a tenth more breaks it, judged by
// plain `serve` runs; bad --slo values are refused.
#include <iomanip>
#include <sstream>

#include <catch2/catch.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

std::string coding_assistant() {
  return std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/serving/coding_assistant.yaml";
}

// The real-time class of a plain serve run at `rate` sessions/s: does it meet
// TTFT p99 <= 500 ms and TPOT p99 <= 2 ms with every request completed?
bool meets_slo(double rate) {
  std::ostringstream set;
  set << std::setprecision(17) << "serving.realtime.rate_per_s=" << rate;
  const Outcome outcome = run_wafersim({"serve", coding_assistant(), "--set", set.str(), "--json", "-", "--quiet"});
  REQUIRE(outcome.exit_code == 0);
  const nlohmann::json realtime = nlohmann::json::parse(outcome.out)["serving"]["classes"]["realtime"];
  INFO(rate << " sessions/s: " << realtime["ttft_ms"].dump() << " " << realtime["tpot_ms"].dump());
  return realtime["requests"]["completed"] == realtime["requests"]["offered"] &&
         realtime["ttft_ms"]["p99"].get<double>() <= 500 && realtime["tpot_ms"]["p99"].get<double>() <= 2;
}

}  // namespace

TEST_CASE("serve --capacity finds a real-time rate that meets the SLO and 30 % more that breaks it",
          "[cli][serve][capacity]") {
  Scratch scratch;
  const std::string json = (scratch.path() / "capacity.json").string();
  // One seed per step (the file's), so that the plain runs below are the search's own judge.
  const Outcome outcome = run_wafersim({"serve", coding_assistant(), "--capacity", "--capacity-seeds", "1", "--slo",
                                        "ttft_p99_ms=500,tpot_p99_ms=2", "--json", json});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const nlohmann::json realtime = nlohmann::json::parse(read_all(json))["capacity"]["classes"]["realtime"];
  const double rate = realtime["rate_per_s"].get<double>();
  const double violating = realtime["violating_rate_per_s"].get<double>();
  CHECK(violating <= rate * 1.02);  // bisected to the 2 % tolerance
  CHECK(realtime["steps"].size() >= 3);
  std::ostringstream reported;
  reported << "largest rate meeting the SLO: " << std::setprecision(4) << rate << " sessions/s";
  CHECK_THAT(outcome.out, Catch::Contains(reported.str()));
  CHECK(meets_slo(rate));
  // One seed's p99 is not monotonic in the rate near the boundary (the
  // coding assistant's TPOT p99 measured 2.32 ms at 4.0 sessions/s, 1.88 at
  // 4.26 and 1.61 at 4.5, against a 2 ms SLO; later 3.97 violated where 4.41
  // met), so the checks on either side of the rate found keep a margin past
  // that noise.
  CHECK(meets_slo(rate * 0.7));
  CHECK(!meets_slo(rate * 1.3));
}

TEST_CASE("bad --slo values are refused in one line naming --slo", "[cli][serve][capacity]") {
  for (const char* slo :
       {"ttft_p99=500", "ttft_p98_ms=500", "ttft_p99_ms=-1", "ttft_p99_ms=500,ttft_p99_ms=4", "ttft_p99_ms=abc", ""}) {
    const Outcome outcome = run_wafersim({"serve", coding_assistant(), "--capacity", "--slo", slo});
    INFO(slo << ": " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains("--slo") || Catch::Contains("--capacity needs --slo"));
  }
  const Outcome without = run_wafersim({"serve", coding_assistant(), "--slo", "ttft_p99_ms=500"});
  CHECK(without.exit_code == 2);
  CHECK_THAT(without.err, Catch::Contains("--capacity"));
}
