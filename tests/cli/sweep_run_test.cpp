// wafersim sweep, driven through the binary: repeatable output, resume, and a
// sweep killed or interrupted mid-run keeping every finished point whole.
#include <set>

#include <catch2/catch.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

// The table without its wall-time column: what must match run to run.
std::vector<std::vector<std::string>> without_wall_time(const Csv& csv) {
  const size_t wall = csv.column("wall_seconds");
  std::vector<std::vector<std::string>> rows = {csv.header};
  rows.insert(rows.end(), csv.rows.begin(), csv.rows.end());
  for (auto& row : rows) row.erase(row.begin() + long(wall));
  return rows;
}

bool has_temporary_files(const std::filesystem::path& folder) {
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().filename().string().find(".tmp") != std::string::npos) return true;
  return false;
}

// Every row names a point record that exists, and no point has two rows.
void check_one_row_per_point(const std::filesystem::path& out, size_t points) {
  const Csv csv = read_csv(out / "results.csv");
  const std::vector<std::string> hashes = csv.values("config_hash");
  CHECK(hashes.size() == points);
  CHECK(std::set<std::string>(hashes.begin(), hashes.end()).size() == points);
  for (const std::string& hash : hashes) CHECK(std::filesystem::exists(out / "points" / (hash + ".json")));
}

}  // namespace

TEST_CASE("the same sweep twice gives the same table and files, wall times aside", "[cli][sweep]") {
  Scratch scratch;
  const std::filesystem::path first = scratch.path() / "first", second = scratch.path() / "second";
  REQUIRE(run_wafersim({"sweep", sweep_data("sections.yaml"), "--out", first.string(), "--jobs", "2"}).exit_code == 0);
  REQUIRE(run_wafersim({"sweep", sweep_data("sections.yaml"), "--out", second.string(), "--jobs", "1"}).exit_code == 0);
  CHECK(without_wall_time(read_csv(first / "results.csv")) == without_wall_time(read_csv(second / "results.csv")));
  CHECK(read_all(first / "sweep.yaml") == read_all(second / "sweep.yaml"));
  for (const std::string& hash : read_csv(first / "results.csv").values("config_hash"))
    CHECK(read_all(first / "points" / (hash + ".yaml")) == read_all(second / "points" / (hash + ".yaml")));
}

TEST_CASE("the resolved sweep.yaml is itself a sweep that reproduces the points", "[cli][sweep]") {
  Scratch scratch;
  const std::filesystem::path first = scratch.path() / "first", again = scratch.path() / "again";
  REQUIRE(run_wafersim({"sweep", sweep_data("ranges.yaml"), "--out", first.string()}).exit_code == 0);
  const Outcome rerun = run_wafersim({"sweep", (first / "sweep.yaml").string(), "--out", again.string()});
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  CHECK_THAT(rerun.err, !Catch::Contains("warning"));
  CHECK(without_wall_time(read_csv(first / "results.csv")) == without_wall_time(read_csv(again / "results.csv")));
}

TEST_CASE("a finished folder is kept: a rerun needs --resume, which runs nothing again", "[cli][sweep]") {
  Scratch scratch;
  const std::string out = (scratch.path() / "out").string();
  REQUIRE(run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out}).exit_code == 0);
  const std::map<std::string, std::string> before = point_records(out);

  const Outcome again = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out});
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Catch::Contains("already holds sweep results; pass --resume"));

  const Outcome resumed = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out, "--resume"});
  CHECK(resumed.exit_code == 0);
  CHECK_THAT(resumed.out,
             Catch::StartsWith("6 of 6 points finished (0 ok, 0 do not fit, 0 failed in this run; 6 from before)"));
  CHECK(point_records(out) == before);  // not one record rewritten
  check_one_row_per_point(out, 6);
}

TEST_CASE("a sweep killed mid-run leaves only whole point files and --resume completes it with one row per point",
          "[cli][sweep]") {
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  {
    Background sweep({"sweep", sweep_data("slow_sim.yaml"), "--out", out.string(), "--jobs", "1"});
    REQUIRE(sweep.wait_until([&] { return std::filesystem::exists(out / "points") && !point_records(out).empty(); }));
    sweep.signal(SIGKILL);
    CHECK(sweep.wait() == 128 + SIGKILL);
  }
  const std::map<std::string, std::string> kept = point_records(out);
  CHECK(kept.size() < 6);  // it was stopped mid-run
  for (const auto& [name, text] : kept) {
    INFO(name);
    CHECK(parses_as_json(text));
  }

  const Outcome resumed = run_wafersim({"sweep", sweep_data("slow_sim.yaml"), "--out", out.string(), "--resume"});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Catch::Contains(std::to_string(kept.size()) + " from before"));
  check_one_row_per_point(out, 6);
  CHECK(read_csv(out / "results.csv").values("status") == std::vector<std::string>(6, "ok"));
  CHECK_FALSE(has_temporary_files(out / "points"));
  for (const auto& [name, text] : kept) CHECK(read_all(out / "points" / name) == text);  // kept, not rerun
}

TEST_CASE("SIGINT stops a sweep cleanly: exit 130, finished rows kept, no temporary files", "[cli][sweep]") {
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  Background sweep({"sweep", sweep_data("slow_sim.yaml"), "--out", out.string(), "--jobs", "2"});
  REQUIRE(sweep.wait_until([&] { return std::filesystem::exists(out / "points") && !point_records(out).empty(); }));
  sweep.signal(SIGINT);
  CHECK(sweep.wait() == 130);
  const std::map<std::string, std::string> kept = point_records(out);
  CHECK(kept.size() < 6);
  CHECK_FALSE(has_temporary_files(out / "points"));
  CHECK(read_csv(out / "results.csv").rows.size() == kept.size());
  for (const auto& [name, text] : kept) CHECK(parses_as_json(text));
}

TEST_CASE("plot_sweep.py draws a finished sweep into DIR/plots", "[cli][sweep]") {
  if (std::system("/usr/bin/python3 -c 'import matplotlib, yaml' 2>/dev/null") != 0) {
    WARN("/usr/bin/python3 has no matplotlib or yaml (Debian python3-matplotlib, python3-yaml): plot not tested");
    return;
  }
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  REQUIRE(run_wafersim({"sweep", sweep_data("sections.yaml"), "--out", out.string()}).exit_code == 0);
  const std::string command = "/usr/bin/python3 " +
                              shell_quoted(std::string(WAFERSIM_SOURCE_DIR) + "/scripts/plot_sweep.py") + " " +
                              shell_quoted(out.string()) + " >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::filesystem::path png = out / "plots" / "tokens_per_second_vs_model_by_hop_latency_cycles.png";
  REQUIRE(std::filesystem::exists(png));
  CHECK(read_all(png).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(std::system(("/usr/bin/python3 " + shell_quoted(std::string(WAFERSIM_SOURCE_DIR) + "/scripts/plot_sweep.py") +
                     " " + shell_quoted(out.string()) + " --y no.such.metric 2>/dev/null")
                        .c_str()) != 0);
}
