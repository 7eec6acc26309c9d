// Energy per token and power as a user sees them: `run` and `analytic` agree
// to the last digit with contention off, the table and --csv show the
// figures, a plan over its systems' rating warns, and bad energies are one
// line and exit 2.
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
const std::string kTinyMoe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";

}  // namespace

TEST_CASE("run and analytic report the same energy with contention off", "[cli][energy]") {
  for (const std::vector<std::string>& experiment :
       {std::vector<std::string>{kTinyDense, "--set", "workload.batch=2"},
        std::vector<std::string>{kTinyMoe, "--set", "hardware.wafers=2"},
        std::vector<std::string>{kTinyDense, "--set", "hardware.wafers=2", "--set", "mapping.dataflow=root"}}) {
    INFO(experiment[0] + " " + experiment.back());
    std::vector<std::string> run = {"run"}, analytic = {"analytic"};
    for (const std::string& arg : experiment) {
      run.push_back(arg);
      analytic.push_back(arg);
    }
    for (auto* args : {&run, &analytic}) args->insert(args->end(), {"--set", "sim.contention=false"});
    const json simulated = run_json(run)["metrics"], closed_form = run_json(analytic)["metrics"];
    REQUIRE(simulated["total_cycles"] == closed_form["total_cycles"]);
    CHECK(simulated["energy"].dump() == closed_form["energy"].dump());
    REQUIRE(simulated.contains("prefill"));
    CHECK(simulated["prefill"]["energy"].dump() == closed_form["prefill"]["energy"].dump());
    CHECK(closed_form["energy"]["joules_per_token"].get<double>() > 0);
    CHECK(closed_form["energy"]["events"]["link_byte_hops"].get<uint64_t>() > 0);
  }
}

TEST_CASE("with contention on only the static energy differs from the closed form", "[cli][energy]") {
  const json simulated = run_json({"run", kTinyDense, "--set", "sim.contention=true", "--set", "workload.batch=3",
                                   "--set", "mapping.dataflow=root"})["metrics"];
  const json closed_form =
      run_json({"analytic", kTinyDense, "--set", "workload.batch=3", "--set", "mapping.dataflow=root"})["metrics"];
  REQUIRE(simulated["total_cycles"].get<uint64_t>() > closed_form["total_cycles"].get<uint64_t>());
  CHECK(simulated["energy"]["events"] == closed_form["energy"]["events"]);
  for (const char* part : {"compute", "sram", "fabric", "offwafer"})
    CHECK(simulated["energy"]["breakdown"][part] == closed_form["energy"]["breakdown"][part]);
  CHECK(simulated["energy"]["breakdown"]["static"].get<double>() >
        closed_form["energy"]["breakdown"]["static"].get<double>());
}

TEST_CASE("the table and --csv show the energy and its breakdown", "[cli][energy]") {
  Scratch scratch;
  const std::string csv_folder = (scratch.path() / "csv").string();
  const Outcome outcome = run_wafersim({"analytic", kTinyDense, "--csv", csv_folder});
  REQUIRE(outcome.exit_code == 0);
  for (const char* row :
       {"decode energy per token", "decode average power", "decode peak power", "prefill energy per prompt token",
        "energy: compute", "energy: sram", "energy: fabric", "energy: offwafer", "energy: static", "rated power"})
    CHECK_THAT(outcome.out, Catch::Contains(row));
  const std::string csv = read_all(scratch.path() / "csv" / "energy.csv");
  CHECK_THAT(csv, Catch::StartsWith("phase,component,joules\n"));
  for (const char* row : {"decode,compute,", "decode,static,", "decode,total,", "prefill,fabric,"})
    CHECK_THAT(csv, Catch::Contains(row));
}

TEST_CASE("a plan over its systems' rated power warns on one line and says so in the JSON", "[cli][energy]") {
  Outcome outcome;
  // The tiny wafer draws about 1.6 W; rate its system at 1 W.
  const json over =
      run_json({"analytic", kTinyDense, "--set", "hardware.energy.rated_power_watts=1"}, 0, &outcome)["metrics"];
  CHECK(over["energy"]["exceeds_rated_power"] == true);
  CHECK(over["energy"]["rated_power_watts"] == 1.0);
  // One line per phase over its rating, nothing else.
  std::istringstream err(outcome.err);
  size_t lines = 0;
  for (std::string line; std::getline(err, line); ++lines) CHECK_THAT(line, Catch::StartsWith("warning: "));
  CHECK(lines == 2);
  CHECK_THAT(outcome.err, Catch::Contains("warning: the decode's peak power"));
  CHECK_THAT(outcome.err, Catch::Contains("warning: the prefill's peak power"));
  CHECK_THAT(outcome.err, Catch::Contains("hardware.energy.rated_power_watts"));

  const json under =
      run_json({"analytic", kTinyDense, "--set", "hardware.energy.rated_power_watts=1000"}, 0, &outcome)["metrics"];
  CHECK(under["energy"]["exceeds_rated_power"] == false);
  CHECK(outcome.err.find("warning") == std::string::npos);
  // No published rating (the tiny preset): 0, never exceeded.
  CHECK(run_json({"analytic", kTinyDense})["metrics"]["energy"]["rated_power_watts"] == 0.0);
}

TEST_CASE("a negative or non-numeric energy is one line naming the key, exit 2", "[cli][energy]") {
  const Outcome negative = run_wafersim({"analytic", kTinyDense, "--set", "hardware.energy.fmac_pj_16bit=-1"});
  CHECK(negative.exit_code == 2);
  CHECK(is_one_line(negative.err));
  CHECK_THAT(negative.err, Catch::Contains("hardware.energy.fmac_pj_16bit"));

  Scratch scratch;
  const std::string file = (scratch.path() / "bad-energy.yaml").string();
  {
    std::ofstream out(file);
    out << "hardware:\n  preset: tiny\n  energy:\n    link_pj_per_byte_hop: lots\nmodel: tiny-dense\n";
  }
  const Outcome word = run_wafersim({"analytic", file});
  CHECK(word.exit_code == 2);
  CHECK(is_one_line(word.err));
  CHECK_THAT(word.err, Catch::Contains("bad-energy.yaml:4:"));
  CHECK_THAT(word.err, Catch::Contains("hardware.energy.link_pj_per_byte_hop"));
}
