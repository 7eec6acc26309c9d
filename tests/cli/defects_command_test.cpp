// Defective wafers as a user drives them: the figures of the repair, the
// fabric energy of its detours, a bad map refused at its own file and line
// (exit 2), and more defects than spares refused as a model that does not
// fit (exit 3).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
const std::string kTinyMap = std::string(WAFERSIM_TEST_DATA) + "/defects/tiny-map.";

std::vector<std::string> with_map(const std::string& command, const std::string& map) {
  return {command, kTinyDense,
          "--set", "hardware.spares.rows=2",
          "--set", "hardware.spares.columns=2",
          "--set", "hardware.defects.map=" + map};
}

}  // namespace

TEST_CASE("a repaired wafer reports its defects, spares and detours", "[cli][defects]") {
  const nlohmann::json result = run_json(with_map("analytic", kTinyMap + "yaml"));
  const nlohmann::json& defects = result["metrics"]["defects"];
  CHECK(defects["dead_tiles"] == 3);
  CHECK(defects["dead_links"] == 1);
  CHECK(defects["spares_used"] == defects["spare_rows_used"].get<int>() + defects["spare_columns_used"].get<int>());
  CHECK(defects["logical_grid"] == "16 x 16");
  CHECK(defects["extra_hops_mean"].get<double>() > 0);
  // The same experiment on a perfect wafer, in closed form, is the plain run's.
  const nlohmann::json perfect = run_json({"analytic", kTinyDense});
  CHECK(defects["perfect_wafer_total_cycles"] == perfect["metrics"]["total_cycles"]);
  CHECK(defects["slowdown"].get<double>() ==
        Approx(result["metrics"]["total_cycles"].get<double>() / perfect["metrics"]["total_cycles"].get<double>()));
  CHECK(defects["slowdown"].get<double>() > 1);
  // The CSV map names the same defects.
  CHECK(run_json(with_map("analytic", kTinyMap + "csv"))["metrics"] == result["metrics"]);
  // The engine's run reports the same figures, its own cycles equal to the closed form's with contention off.
  std::vector<std::string> simulated = with_map("run", kTinyMap + "yaml");
  simulated.insert(simulated.end(), {"--set", "sim.contention=false"});
  const nlohmann::json run = run_json(simulated);
  CHECK(run["metrics"]["defects"] == defects);
  CHECK(run["metrics"]["total_cycles"] == result["metrics"]["total_cycles"]);
  // A perfect wafer has no such figures.
  CHECK_FALSE(perfect["metrics"].contains("defects"));
}

TEST_CASE("a repaired wafer's fabric energy counts its detours", "[cli][defects][energy]") {
  const nlohmann::json perfect = run_json({"analytic", kTinyDense})["metrics"]["energy"];
  const nlohmann::json repaired = run_json(with_map("analytic", kTinyMap + "yaml"))["metrics"]["energy"];
  // The same programs: the same multiply-adds and SRAM bytes; more links crossed, so more fabric energy.
  CHECK(repaired["events"]["flops_16bit"] == perfect["events"]["flops_16bit"]);
  CHECK(repaired["events"]["sram_read_bytes"] == perfect["events"]["sram_read_bytes"]);
  CHECK(repaired["events"]["link_byte_hops"].get<uint64_t>() > perfect["events"]["link_byte_hops"].get<uint64_t>());
  CHECK(repaired["breakdown"]["fabric"].get<double>() > perfect["breakdown"]["fabric"].get<double>());
  CHECK(repaired["breakdown"]["compute"] == perfect["breakdown"]["compute"]);
  CHECK(repaired["joules_per_token"].get<double>() > perfect["joules_per_token"].get<double>());
  // A map without defects is a perfect wafer: every energy figure is the same.
  Scratch scratch;
  const std::string empty = scratch.write("map.yaml", "dead_tiles: []\ndead_links: []\n");
  CHECK(run_json(with_map("analytic", empty))["metrics"]["energy"] == perfect);
}

TEST_CASE("a bad defect map is refused at its file and line", "[cli][defects]") {
  Scratch scratch;
  const std::string map = scratch.write("map.csv", "tile,1,1\ntile,18,3\n");
  const Outcome outcome = run_wafersim(with_map("analytic", map));
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::StartsWith("error: " + map + ":2") &&
                              Catch::Contains("hardware.defects.map: x = 18 is outside the 18 x 18 physical grid"));
}

TEST_CASE("more defects than spares do not fit, with the missing tiles", "[cli][defects]") {
  Scratch scratch;
  const std::string map = scratch.write("map.yaml", "dead_tiles: [[1, 1], [4, 4], [7, 7], [10, 10], [13, 13]]\n");
  for (const char* command : {"analytic", "run", "map"}) {
    const Outcome outcome = run_wafersim(with_map(command, map));
    INFO(command);
    CHECK(outcome.exit_code == 3);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::StartsWith("does not fit: 1 dead tiles are left after every spare is used") &&
                                Catch::Contains("the 16 x 16 logical grid misses 1 tile"));
  }
  // --json records the refusal as any plan that does not fit.
  const nlohmann::json record = run_json(with_map("analytic", map), 3);
  CHECK(record["fits"] == false);
  CHECK_THAT(record["error"].get<std::string>(), Catch::Contains("misses 1 tile"));
}

TEST_CASE("each wafer draws its own defects: figures over the wafers, a short wafer named", "[cli][defects]") {
  // Seed 1 at this rate: wafer 0 draws one dead tile, which its spare row or column repairs; wafer 1 five.
  const std::vector<std::string> drawn = {"--set", "hardware.spares.rows=1",
                                          "--set", "hardware.spares.columns=1",
                                          "--set", "hardware.defects.tile_failure_rate=0.006",
                                          "--set", "hardware.defects.seed=1"};
  std::vector<std::string> one = {"map", kTinyDense, "--set", "hardware.wafers=1"};
  one.insert(one.end(), drawn.begin(), drawn.end());
  const nlohmann::json plan = run_json(one);
  REQUIRE(plan["defects"]["wafers"].size() == 1);
  CHECK(plan["defects"]["dead_tiles"] == 1);
  std::vector<std::string> two = {"analytic", kTinyDense, "--set", "hardware.wafers=2"};
  two.insert(two.end(), drawn.begin(), drawn.end());
  const Outcome outcome = run_wafersim(two);
  CHECK(outcome.exit_code == 3);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::StartsWith("does not fit: wafer 1: 3 dead tiles are left after every spare is used"));
  // With two spare rows and columns both wafers repair; the figures are over both.
  two[0] = "map";
  two.insert(two.end(), {"--set", "hardware.spares.rows=2", "--set", "hardware.spares.columns=2"});
  const nlohmann::json defects = run_json(two)["defects"];
  REQUIRE(defects["wafers"].size() == 2);
  CHECK(defects["wafers"][0]["dead_tiles"] == 1);
  CHECK(defects["wafers"][1]["dead_tiles"] == 5);
  CHECK(defects["dead_tiles"] == 6);
  two[0] = "analytic";
  const nlohmann::json metrics = run_json(two)["metrics"]["defects"];
  CHECK(metrics["dead_tiles"] == 6);
  CHECK(metrics["spare_rows_used"].get<int>() + metrics["spare_columns_used"].get<int>() >= 2);
}

TEST_CASE("the functional check passes on a repaired wafer", "[cli][defects]") {
  std::vector<std::string> args = with_map("analytic", kTinyMap + "yaml");
  args.insert(args.end(), {"--set", "sim.functional=true"});
  const Outcome outcome = run_wafersim(args);
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  CHECK_THAT(outcome.out, Catch::Contains("functional: numbers match the reference"));
}

TEST_CASE("map shows the repaired wafer under the plan", "[cli][defects]") {
  const nlohmann::json plan = run_json(with_map("map", kTinyMap + "yaml"));
  const nlohmann::json& defects = plan["defects"];
  CHECK(defects["physical_grid"] == nlohmann::json({18, 18}));
  REQUIRE(defects["wafers"].size() == 1);
  CHECK(defects["wafers"][0]["retired_rows"].size() + defects["wafers"][0]["retired_columns"].size() == 4);
  CHECK(defects["wafers"][0]["dead_tiles"] == defects["dead_tiles"]);
  CHECK(defects["route_extra_hops_max"].get<int>() > 0);
  const Outcome table = run_wafersim(with_map("map", kTinyMap + "yaml"));
  CHECK_THAT(table.out, Catch::Contains("repaired wafer") && Catch::Contains("3 dead tiles, 1 dead links"));
  CHECK_FALSE(run_json({"map", kTinyDense}).contains("defects"));
}

TEST_CASE("the shift scheme spends fewer spares and detours than retiring whole lines", "[cli][defects]") {
  std::vector<std::string> args = with_map("analytic", kTinyMap + "yaml");
  const nlohmann::json lines = run_json(args)["metrics"];
  args.insert(args.end(), {"--set", "hardware.spares.scheme=shift"});
  const nlohmann::json shift = run_json(args)["metrics"];
  // Rows 5, 9 and 14 each shift past one dead tile (row 17 is a spare row the grid does not reach).
  CHECK(shift["defects"]["spare_rows_used"] == 0);
  CHECK(shift["defects"]["spare_columns_used"] == 1);
  CHECK(lines["defects"]["spares_used"] == 4);
  CHECK(shift["defects"]["extra_hops_mean"].get<double>() < lines["defects"]["extra_hops_mean"].get<double>());
  CHECK(shift["total_cycles"].get<uint64_t>() < lines["total_cycles"].get<uint64_t>());
  CHECK(shift["defects"]["slowdown"].get<double>() > 1);
  args[0] = "map";
  const nlohmann::json plan = run_json(args);
  CHECK(plan["defects"]["scheme"] == "shift");
  CHECK(plan["defects"]["wafers"][0]["shifted_rows"] == 3);
  CHECK(plan["defects"]["wafers"][0]["retired_rows"].empty());
  CHECK_THAT(run_wafersim(args).out, Catch::Contains("3 rows shifted past their dead tiles (by up to 1 columns)"));
}

TEST_CASE("run with exact detours charges less than the worst charge and more than a perfect wafer", "[cli][defects]") {
  std::vector<std::string> args = with_map("run", kTinyMap + "yaml");
  args.insert(args.end(), {"--set", "sim.contention=false", "--set", "workload.prefill=false"});
  const nlohmann::json table = run_json(args)["metrics"];
  args.insert(args.end(), {"--set", "sim.exact_detours=true"});
  const nlohmann::json exact = run_json(args)["metrics"];
  // The closed form beside the run keeps the table: the same slowdown figures, other simulated cycles.
  CHECK(exact["defects"] == table["defects"]);
  CHECK(exact["total_cycles"].get<uint64_t>() < table["total_cycles"].get<uint64_t>());
  CHECK(exact["total_cycles"].get<uint64_t>() > table["defects"]["perfect_wafer_total_cycles"].get<uint64_t>());
}

TEST_CASE("speculative decoding on a repaired wafer reports the detours' slowdown", "[cli][defects][speculative]") {
  const std::string speculative = std::string(WAFERSIM_TEST_DATA) + "/speculative/tiny-speculative.yaml";
  const std::vector<std::string> repaired = {"--set", "hardware.spares.rows=2",
                                             "--set", "hardware.spares.columns=2",
                                             "--set", "hardware.defects.map=" + kTinyMap + "yaml"};
  std::vector<std::string> args = {"analytic", speculative};
  args.insert(args.end(), repaired.begin(), repaired.end());
  const nlohmann::json result = run_json(args);
  const nlohmann::json& defects = result["metrics"]["defects"];
  // The same speculative experiment on a perfect wafer, in closed form.
  const nlohmann::json perfect = run_json({"analytic", speculative});
  CHECK(defects["perfect_wafer_total_cycles"] == perfect["metrics"]["total_cycles"]);
  CHECK(defects["slowdown"].get<double>() ==
        Approx(result["metrics"]["total_cycles"].get<double>() / perfect["metrics"]["total_cycles"].get<double>()));
  CHECK(defects["slowdown"].get<double>() > 1);
  // The engine's run evaluates the closed form beside it for the same figures.
  args[0] = "run";
  CHECK(run_json(args)["metrics"]["defects"] == defects);
}
