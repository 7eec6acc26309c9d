// sim.functional as a user drives it: the figures in the JSON, the same
// timing with and without it, exit 1 naming where the numbers diverge, and
// exit 2 for a plan the check does not cover.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";

}  // namespace

TEST_CASE("run with sim.functional reports the numbers' errors and keeps every cycle", "[cli][functional]") {
  const json plain = run_json({"run", kTinyDense}, 0);
  const json checked = run_json({"run", kTinyDense, "--set", "sim.functional=true"}, 0);
  CHECK(!plain.contains("functional"));
  CHECK(checked["metrics"] == plain["metrics"]);
  CHECK(checked["utilization"] == plain["utilization"]);
  const json& f = checked["functional"];
  for (const char* key : {"max_abs_error", "max_rel_error", "argmax_agreement", "tolerance"}) CHECK(f[key].is_number());
  CHECK(f["passed"] == true);
  CHECK(f["tokens"] == 20);             // 16 prompt and 4 decoded positions
  CHECK(f["prefill_checked"] == true);  // the prompt went through the prefill plan that was timed
  CHECK(f["max_rel_error"].get<double>() <= f["tolerance"].get<double>());
  CHECK(f["argmax_agreement"].get<double>() > 0.5);
  CHECK(f["first_divergence"].is_null());
}

TEST_CASE("run with sim.functional and no prefill takes the prompt through the decode plan", "[cli][functional]") {
  const json result =
      run_json({"analytic", kTinyDense, "--set", "sim.functional=true", "--set", "workload.prefill=false"}, 0);
  CHECK(result["functional"]["passed"] == true);
  CHECK(result["functional"]["prefill_checked"] == false);
  CHECK(result["functional"]["tokens"] == 20);
}

TEST_CASE("run with sim.functional passes q/k norm of heads cut across the root column's tiles", "[cli][functional]") {
  // The root column's slices cut the heads: their sums of squares are reduced
  // across the tiles before the norm (tests/functional).
  const json result = run_json({"run", kTinyDense, "--set", "sim.functional=true", "--set", "model.qk_norm=true",
                                "--set", "mapping.dataflow=root"},
                               0);
  CHECK(result["functional"]["passed"] == true);
  CHECK(result["functional"]["first_divergence"].is_null());
}

TEST_CASE("run with sim.functional refuses a plan it cannot evaluate as bad input", "[cli][functional]") {
  const Outcome outcome =
      run_wafersim({"run", kTinyDense, "--quiet", "--set", "sim.functional=true", "--set", "model.weight_dtype=fp8"});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err.find("sim.functional") != std::string::npos);
  CHECK(outcome.err.find("fp8") != std::string::npos);
}

TEST_CASE("run with sim.functional refuses latent attention as bad input", "[cli][functional][mla]") {
  const Outcome outcome = run_wafersim({"run", std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-mla.yaml",
                                        "--quiet", "--set", "sim.functional=true"});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err.find("sim.functional") != std::string::npos);
  CHECK(outcome.err.find("latent attention") != std::string::npos);
}

TEST_CASE("run with sim.functional refuses a model larger than the memory it can have", "[cli][functional]") {
  // Llama 3.1 70B: about 70e9 parameters at 12 bytes each is more than this machine's memory.
  const Outcome outcome =
      run_wafersim({"analytic", std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/quickstart.yaml", "--quiet",
                    "--set", "sim.functional=true", "--set", "model=llama3.1-70b", "--set", "hardware.wafers=auto"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err.find("sim.functional") != std::string::npos);
  CHECK(outcome.err.find("GB of memory") != std::string::npos);
}
