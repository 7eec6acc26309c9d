// wafersim search, driven through the binary on the tiny wafer (tens of
// milliseconds a point): the best plan, the Pareto front, constraints,
// strategies, resume, --verify and the refusals of bad arguments.
#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

const std::string kObjective = "metrics.tokens_per_second_per_user";

std::string tiny() { return std::string(WAFERSIM_TEST_DATA) + "/search/tiny.yaml"; }

Outcome search(const std::filesystem::path& out, std::vector<std::string> arguments) {
  std::vector<std::string> all = {"search", tiny(), "-o", out.string(), "--jobs", "2"};
  all.insert(all.end(), arguments.begin(), arguments.end());
  return run_wafersim(all);
}

nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(read_all(path)); }

// The feasible rows of points.csv: (objective, second figure, hash).
struct Row {
  double objective, second;
  std::string hash;
};
std::vector<Row> feasible_rows(const Csv& csv, const std::string& second) {
  std::vector<Row> rows;
  for (const auto& row : csv.rows)
    if (row[csv.column("feasible")] == "true")
      rows.push_back(
          {std::stod(row[csv.column(kObjective)]), std::stod(row[csv.column(second)]), row[csv.column("config_hash")]});
  return rows;
}

const std::vector<std::string> kGridAxes = {"--vary", "mapping.ktree_levels=1,2,3", "--vary",
                                            "mapping.region_aspect=0.5,1,2"};

}  // namespace

TEST_CASE("a grid search's best plan is the fastest point and runs again as reported", "[cli][search]") {
  Scratch scratch;
  std::vector<std::string> arguments = kGridAxes;
  for (const char* a : {"--objective", "tokens_per_second_per_user", "--strategy", "grid"}) arguments.push_back(a);
  const Outcome outcome = search(scratch.path(), arguments);
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const nlohmann::json document = read_json(scratch.path() / "search.json");
  const std::vector<Row> rows = feasible_rows(read_csv(scratch.path() / "points.csv"), "experiment.wafers");
  CHECK(rows.size() == 9);  // the grid, the default among them (ktree_levels 2, region_aspect 1)
  const auto fastest =
      std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.objective < b.objective; });
  CHECK(document["best"]["config_hash"] == fastest->hash);
  CHECK(document["best"]["objective"].get<double>() == fastest->objective);
  const double base = document["default"]["objective"].get<double>();
  CHECK(document["gain_over_default"].get<double>() == Approx(fastest->objective / base));
  CHECK(fastest->objective > base);  // on this grid a plan beats the default
  CHECK_THAT(outcome.out, Catch::Contains("the default (+"));

  // best.yaml is the experiment as the user runs it; the search leaves out the prefill only.
  const Outcome again = run_wafersim({"analytic", (scratch.path() / "best.yaml").string(), "--set",
                                      "workload.prefill=false", "--json", "-", "--quiet"});
  REQUIRE(again.exit_code == 0);
  CHECK(nlohmann::json::parse(again.out)["metrics"]["tokens_per_second_per_user"].get<double>() == fastest->objective);
}

TEST_CASE("coordinate descent reaches the grid's best on a small space with fewer points", "[cli][search]") {
  Scratch scratch;
  std::vector<std::string> grid_arguments = kGridAxes, coordinate_arguments = kGridAxes;
  for (const char* a : {"--objective", "tokens_per_second_per_user", "--strategy", "grid"}) grid_arguments.push_back(a);
  for (const char* a : {"--objective", "tokens_per_second_per_user", "--strategy", "coordinate"})
    coordinate_arguments.push_back(a);
  REQUIRE(search(scratch.path() / "grid", grid_arguments).exit_code == 0);
  const Outcome coordinate = search(scratch.path() / "coordinate", coordinate_arguments);
  REQUIRE(coordinate.exit_code == 0);
  const nlohmann::json grid = read_json(scratch.path() / "grid" / "search.json");
  const nlohmann::json descent = read_json(scratch.path() / "coordinate" / "search.json");
  CHECK(descent["best"]["objective"] == grid["best"]["objective"]);
  CHECK(descent["evaluated"].get<size_t>() < grid["evaluated"].get<size_t>());
  CHECK(descent["passes"].get<size_t>() >= 2);  // the last pass finds nothing better
  // The same search again makes the same choices.
  const Outcome repeated = search(scratch.path() / "repeated", coordinate_arguments);
  REQUIRE(repeated.exit_code == 0);
  CHECK(read_csv(scratch.path() / "repeated" / "points.csv").values("config_hash") ==
        read_csv(scratch.path() / "coordinate" / "points.csv").values("config_hash"));
}

TEST_CASE("the Pareto front holds exactly the points no other point beats in both figures", "[cli][search]") {
  Scratch scratch;
  std::vector<std::string> arguments = kGridAxes;
  for (const char* a : {"--vary", "hardware.wafers=1,2", "--objective", "tokens_per_second_per_user", "--pareto",
                        "joules_per_token", "--strategy", "grid"})
    arguments.push_back(a);
  REQUIRE(search(scratch.path(), arguments).exit_code == 0);
  const std::vector<Row> rows =
      feasible_rows(read_csv(scratch.path() / "points.csv"), "metrics.energy.joules_per_token");
  const std::vector<std::string> front = read_csv(scratch.path() / "pareto.csv").values("config_hash");
  REQUIRE(!front.empty());
  auto beaten = [&](const Row& row) {
    return std::any_of(rows.begin(), rows.end(), [&](const Row& other) {
      return other.objective >= row.objective && other.second <= row.second &&
             (other.objective > row.objective || other.second < row.second);
    });
  };
  std::set<std::string> expected, hashes_on_front(front.begin(), front.end());
  std::set<std::pair<double, double>> figures_on_front;
  for (const Row& row : rows)
    if (!beaten(row) && figures_on_front.insert({row.objective, row.second}).second) expected.insert(row.hash);
  CHECK(hashes_on_front == expected);
}

TEST_CASE("a constraint leaves the points outside it infeasible", "[cli][search]") {
  Scratch scratch;
  std::vector<std::string> arguments = kGridAxes;
  for (const char* a : {"--objective", "tokens_per_second_per_user", "--strategy", "grid", "--constraint",
                        "config.mapping.ktree_levels>=2"})
    arguments.push_back(a);
  REQUIRE(search(scratch.path(), arguments).exit_code == 0);
  const Csv csv = read_csv(scratch.path() / "points.csv");
  for (const auto& row : csv.rows)
    CHECK((row[csv.column("feasible")] == "true") == (row[csv.column("mapping.ktree_levels")] != "1"));
  CHECK(read_json(scratch.path() / "search.json")["best"]["values"]["mapping.ktree_levels"].get<int>() >= 2);
}

TEST_CASE("values that do not combine are listed as invalid and the search goes on", "[cli][search]") {
  Scratch scratch;
  const Outcome outcome =
      search(scratch.path(), {"--vary", "mapping.kv_head_copies=1,2", "--vary", "mapping.attention=groups,grid",
                              "--objective", "tokens_per_second_per_user", "--strategy", "grid"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const Csv csv = read_csv(scratch.path() / "points.csv");
  const std::vector<std::string> status = csv.values("status");
  CHECK(std::count(status.begin(), status.end(), "invalid") == 1);  // two copies with grid attention
  CHECK(std::count(status.begin(), status.end(), "ok") == 4);
}

TEST_CASE("a random search is seeded and resumes without running its points again", "[cli][search]") {
  Scratch scratch;
  const std::vector<std::string> arguments = {"--vary",      "mapping.ktree_levels=1,2,3",
                                              "--vary",      "mapping.region_aspect=0.25,0.5,1,2,4",
                                              "--objective", "tokens_per_second",
                                              "--strategy",  "random",
                                              "--points",    "6"};
  auto with_seed = [&](const std::string& seed) {
    std::vector<std::string> all = arguments;
    all.push_back("--seed");
    all.push_back(seed);
    return all;
  };
  REQUIRE(search(scratch.path() / "a", with_seed("1")).exit_code == 0);
  REQUIRE(search(scratch.path() / "b", with_seed("1")).exit_code == 0);
  REQUIRE(search(scratch.path() / "c", with_seed("2")).exit_code == 0);
  const std::vector<std::string> a = read_csv(scratch.path() / "a" / "points.csv").values("config_hash");
  CHECK(a.size() == 6);
  CHECK(a == read_csv(scratch.path() / "b" / "points.csv").values("config_hash"));
  CHECK(a != read_csv(scratch.path() / "c" / "points.csv").values("config_hash"));

  // A folder with results is refused without --resume; with it, every record stays as it was.
  const Outcome refused = search(scratch.path() / "a", with_seed("1"));
  CHECK(refused.exit_code == 2);
  CHECK(is_one_line(refused.err));
  const std::map<std::string, std::string> before = point_records(scratch.path() / "a");
  std::vector<std::string> resumed = with_seed("1");
  resumed.push_back("--resume");
  REQUIRE(search(scratch.path() / "a", resumed).exit_code == 0);
  CHECK(point_records(scratch.path() / "a") == before);
  CHECK(read_csv(scratch.path() / "a" / "points.csv").values("config_hash") == a);
}

TEST_CASE("a search's --verify runs the best point with the engine and reports the closed form's distance",
          "[cli][search]") {
  Scratch scratch;
  const Outcome outcome = search(scratch.path(), {"--vary", "mapping.ktree_levels=1,2", "--objective",
                                                  "tokens_per_second_per_user", "--strategy", "grid", "--verify", "1"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const nlohmann::json document = read_json(scratch.path() / "search.json");
  REQUIRE(document["verify"].size() == 1);
  const nlohmann::json& row = document["verify"][0];
  CHECK(row["config_hash"] == document["best"]["config_hash"]);
  const nlohmann::json record = read_json(scratch.path() / row["file"].get<std::string>());
  CHECK(record["engine"] == "sim");
  const double engine = record["result"]["metrics"]["tokens_per_second_per_user"].get<double>();
  CHECK(row["engine"].get<double>() == engine);
  CHECK(row["difference"].get<double>() == Approx(engine / document["best"]["objective"].get<double>() - 1));
  CHECK_THAT(outcome.out, Catch::Contains("verify " + row["config_hash"].get<std::string>()));
}

TEST_CASE("bad search arguments are refused in one line naming the argument", "[cli][search]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--vary", "mapping.ktree_levels", "--objective", "ttft"}, "--vary mapping.ktree_levels"},
      {{"--vary", "mapping.ktree_level=1,2", "--objective", "ttft"}, "did you mean 'mapping.ktree_levels'"},
      {{"--vary", "mapping.ktree_levels=range:1:x", "--objective", "ttft"}, "range STOP expects a number"},
      {{"--vary", "mapping.ktree_levels=log2:1:3", "--objective", "ttft"}, "--vary mapping.ktree_levels=log2:1:3"},
      {{"--vary", "mapping.ktree_levels=1,,2", "--objective", "ttft"}, "empty value"},
      {{"--vary", "mapping.ktree_levels=1,99", "--objective", "ttft"}, "--vary mapping.ktree_levels=1,99"},
      {{"--vary", "mapping.ktree_levels=1,2", "--objective", "tokens_per_secnd"}, "did you mean 'tokens_per_second'"},
      {{"--vary", "mapping.ktree_levels=1,2", "--objective", "ttft", "--constraint", "wafers=2"}, "--constraint"},
      {{"--vary", "mapping.ktree_levels=1,2", "--objective", "ttft", "--constraint", "metrics.bogus<=2"},
       "unknown figure 'metrics.bogus'"},
      {{"--vary", "mapping.ktree_levels=1,2", "--objective", "ttft", "--strategy", "anneal"}, "--strategy anneal"},
  };
  for (const auto& [arguments, expected] : cases) {
    Scratch scratch;
    const Outcome outcome = search(scratch.path(), arguments);
    INFO(outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(expected));
    CHECK(!std::filesystem::exists(scratch.path() / "points.csv"));
  }
}

TEST_CASE("for Llama 3.1 8B on one WSE-3 a search finds a plan faster than the default and says by how much",
          "[cli][search]") {
  Scratch scratch;
  const Outcome outcome =
      run_wafersim({"search", std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/quickstart.yaml", "--vary",
                    "mapping.region_aspect=0.25,1", "--vary", "mapping.strips=0,6", "--objective",
                    "tokens_per_second_per_user", "--strategy", "grid", "--jobs", "2", "-o", scratch.path().string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const nlohmann::json document = read_json(scratch.path() / "search.json");
  const double gain = document["gain_over_default"].get<double>();
  CHECK(gain > 1);
  CHECK(document["best"]["objective"].get<double>() ==
        Approx(document["default"]["objective"].get<double>() * gain).epsilon(1e-12));
  std::ostringstream reported;
  reported << std::fixed << std::setprecision(1) << "(+" << (gain - 1) * 100 << " %)";
  CHECK_THAT(outcome.out, Catch::Contains(reported.str()));
}
