// wafersim sweep --backend slurm against a real one-node Slurm, brought up by
// the local_slurm test fixture (scripts/slurm_local.sh) and always taken down
// after: the same table as the local backend, a cancelled array resumed
// with every point run exactly once, and a search's rounds run as arrays.
#include <cstdlib>
#include <iostream>
#include <map>
#include <regex>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "../cli/sweep_test_support.h"

using namespace wafersim::testing;

namespace {

// The Slurm of the fixture, or the reason this test cannot run. Without root
// there is no local Slurm to start: the test reports itself skipped (exit code
// 77); as root a missing Slurm is a failure.
void require_local_slurm() {
  const char* conf = std::getenv("SLURM_CONF");
  if (conf && std::filesystem::exists(conf)) return;
  if (::geteuid() != 0) {
    std::cerr << "skipped: the local Slurm needs root (scripts/slurm_local.sh up)\n";
    std::exit(77);
  }
  FAIL("no local Slurm: SLURM_CONF does not name a slurm.conf (did the slurm_up fixture fail?)");
}

std::vector<std::vector<std::string>> without_wall_time(const Csv& csv) {
  const size_t wall = csv.column("wall_seconds");
  std::vector<std::vector<std::string>> rows = {csv.header};
  rows.insert(rows.end(), csv.rows.begin(), csv.rows.end());
  for (auto& row : rows) row.erase(row.begin() + long(wall));
  return rows;
}

void check_same_table_as_local(const Scratch& scratch, const std::string& sweep) {
  const std::string local = (scratch.path() / "local").string(), slurm = (scratch.path() / "slurm").string();
  REQUIRE(run_wafersim({"sweep", sweep, "--out", local}).exit_code == 0);
  const Outcome submitted = run_wafersim({"sweep", sweep, "--out", slurm, "--backend", "slurm", "--wait"});
  INFO(submitted.out << submitted.err);
  REQUIRE(submitted.exit_code == 0);
  CHECK_THAT(submitted.out, Catch::Contains("submitted Slurm job"));
  CHECK(without_wall_time(read_csv(slurm + "/results.csv")) == without_wall_time(read_csv(local + "/results.csv")));
  for (const std::string& status : read_csv(slurm + "/results.csv").values("status")) CHECK(status == "ok");
}

std::string job_id_of(const std::string& out) {
  std::smatch match;
  const bool found = std::regex_search(out, match, std::regex("submitted Slurm job ([0-9]+)"));
  REQUIRE(found);
  return match[1];
}

// "point <hash>: ok in ..." lines of every task log, by hash: how often each point finished.
std::map<std::string, int> finished_runs(const std::filesystem::path& out) {
  std::map<std::string, int> runs;
  const std::regex finished("^point ([0-9a-f]+): (ok|does_not_fit|failed) in ");
  for (const auto& entry : std::filesystem::directory_iterator(out / "slurm")) {
    if (entry.path().extension() != ".log") continue;
    std::istringstream lines(read_all(entry.path()));
    std::smatch match;
    for (std::string line; std::getline(lines, line);)
      if (std::regex_search(line, match, finished)) ++runs[match[1]];
  }
  return runs;
}

}  // namespace

TEST_CASE("a Slurm job array gives the local backend's table, analytic and simulated", "[slurm]") {
  require_local_slurm();
  {
    Scratch scratch;
    check_same_table_as_local(scratch, sweep_data("grid.yaml"));  // 6 analytic points
  }
  {
    Scratch scratch;
    check_same_table_as_local(scratch, sweep_data("slurm_sim.yaml"));  // 2 simulated points
  }
}

TEST_CASE("a cancelled Slurm array resumes with every point run exactly once and nothing lost", "[slurm]") {
  require_local_slurm();
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  const std::string sweep = sweep_data("slow_sim.yaml");  // 6 simulated points, about a second each
  const Outcome submitted =
      run_wafersim({"sweep", sweep, "--out", out.string(), "--backend", "slurm", "--max-parallel", "1"});
  INFO(submitted.out << submitted.err);
  REQUIRE(submitted.exit_code == 0);
  const std::string job = job_id_of(submitted.out);

  // No bound on the time: a loaded machine is slow, not wrong (ctest's timeout catches a hang).
  const auto job_ended = [&] {
    return run_shell("squeue -h -j " + job + " -t PENDING,RUNNING,COMPLETING -o %i").out.empty();
  };
  size_t polls = 0;  // squeue is a process and a call to the controller: asked on every 50th poll only
  REQUIRE(wait_until([&] { return point_records(out).size() >= 2; }, [&] { return ++polls % 50 == 0 && job_ended(); }));
  REQUIRE(run_shell("scancel " + job).exit_code == 0);
  REQUIRE(wait_until(job_ended, [] { return false; }));
  const std::map<std::string, std::string> before = point_records(out);
  REQUIRE(before.size() < 6);  // cancelled mid-way

  // A second submission while nothing runs is fine; --collect first marks what is missing.
  const Outcome collected = run_wafersim({"sweep", sweep, "--out", out.string(), "--collect"});
  REQUIRE(collected.exit_code == 0);
  const Csv partial = read_csv(out / "results.csv");
  CHECK(partial.rows.size() == 6);
  size_t marked = 0;
  for (const auto& row : partial.rows)
    if (row[partial.column("status")] != "ok") {
      ++marked;
      CHECK_THAT(row[partial.column("error")], Catch::Contains("Slurm task " + job + "_"));
    }
  CHECK(marked == 6 - before.size());

  const Outcome resumed =
      run_wafersim({"sweep", sweep, "--out", out.string(), "--backend", "slurm", "--resume", "--wait"});
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Catch::Contains(std::to_string(6 - before.size()) + " task(s)"));
  const std::map<std::string, std::string> after = point_records(out);
  CHECK(after.size() == 6);
  for (const auto& [name, text] : before) CHECK(after.at(name) == text);  // not run again
  const Csv table = read_csv(out / "results.csv");
  REQUIRE(table.rows.size() == 6);
  for (const std::string& status : table.values("status")) CHECK(status == "ok");
  const std::map<std::string, int> runs = finished_runs(out);
  CHECK(runs.size() == 6);
  for (const auto& [hash, count] : runs) {
    INFO(hash);
    CHECK(count == 1);
  }
}

TEST_CASE("a search on Slurm, one array per round, evaluates the same points as on this machine", "[slurm][search]") {
  require_local_slurm();
  Scratch scratch;
  const std::string tiny = std::string(WAFERSIM_TEST_DATA) + "/search/tiny.yaml";
  auto search = [&](const std::string& out, std::vector<std::string> backend) {
    std::vector<std::string> arguments = {"search",      tiny,
                                          "--vary",      "mapping.ktree_levels=1,2,3",
                                          "--vary",      "mapping.region_aspect=0.5,1,2",
                                          "--objective", "tokens_per_second_per_user",
                                          "-o",          out};
    arguments.insert(arguments.end(), backend.begin(), backend.end());
    return run_wafersim(arguments);
  };
  const std::string local = (scratch.path() / "local").string(), slurm = (scratch.path() / "slurm").string();
  REQUIRE(search(local, {}).exit_code == 0);
  const Outcome submitted = search(slurm, {"--backend", "slurm"});
  INFO(submitted.out << submitted.err);
  REQUIRE(submitted.exit_code == 0);
  CHECK_THAT(submitted.err, Catch::Contains("round 2: Slurm job"));
  CHECK(read_all(slurm + "/points.csv") == read_all(local + "/points.csv"));
}
