// A sweep stopped while it starts, a point killed from outside, and an output
// folder the sweep cannot use: each ends as the error contract says.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

// A sweep of many quick points: writing their files takes the sweep a while before any run starts.
std::string many_points_sweep(const Scratch& scratch) {
  return scratch.write("many.yaml", "base: " + std::string(WAFERSIM_TEST_DATA) +
                                        "/good/tiny.yaml\nengine: map\naxes:\n  workload.seed: {range: {start: 1, "
                                        "stop: 400, step: 1}}\nmetrics: [fits]\n");
}

}  // namespace

TEST_CASE("a stop signal while a sweep starts ends it with exit 130 and the resume hint", "[cli][sweep][signals]") {
  Scratch scratch;
  const std::string file = many_points_sweep(scratch);
  const std::filesystem::path out = scratch.path() / "out";
  Background sweep({"sweep", file, "--out", out.string(), "--jobs", "1"});
  // The points folder appears before the sweep writes its 400 point files and starts a run.
  REQUIRE(sweep.wait_until([&] { return std::filesystem::exists(out / "points"); }));
  sweep.signal(SIGTERM);
  CHECK(sweep.wait() == 130);
}

TEST_CASE("resume runs again a point killed by a signal, not one that failed on its input", "[cli][sweep][signals]") {
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  REQUIRE(run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out.string()}).exit_code == 0);
  std::map<std::string, std::string> records = point_records(out);
  REQUIRE(records.size() == 6);
  // Mark one point as killed by the out-of-memory killer and another as failed with exit code 2.
  auto rewrite = [&](const std::string& name, int exit_code, const std::string& error) {
    nlohmann::json record = nlohmann::json::parse(records.at(name));
    record["status"] = "failed";
    record["exit_code"] = exit_code;
    record["error"] = error;
    std::ofstream(out / "points" / name) << record.dump(2) << "\n";
  };
  const std::string killed = records.begin()->first, bad = std::next(records.begin())->first;
  rewrite(killed, 128 + SIGKILL, "killed by signal 9 (Killed)");
  rewrite(bad, 2, "error: some bad input");

  const Outcome resumed = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out.string(), "--resume"});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Catch::StartsWith("6 of 6 points finished (1 ok, 0 do not fit, 0 failed in this run; 5 "
                                            "from before)"));
  const std::map<std::string, std::string> after = point_records(out);
  CHECK(nlohmann::json::parse(after.at(killed))["status"] == "ok");
  CHECK(nlohmann::json::parse(after.at(bad))["status"] == "failed");
}

TEST_CASE("a points folder the sweep cannot read is bad input naming it", "[cli][sweep][signals]") {
  Scratch scratch;
  const std::filesystem::path out = scratch.path() / "out";
  std::filesystem::create_directories(out / "points");
  std::filesystem::permissions(out, std::filesystem::perms::all);
  std::filesystem::permissions(out / "points", std::filesystem::perms::none);
  // Permissions do not stop root: run the sweep as nobody then.
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const Outcome outcome = run_shell(as_user + shell_quoted(WAFERSIM_BINARY) + " sweep " +
                                    shell_quoted(sweep_data("grid.yaml")) + " --out " + shell_quoted(out.string()));
  std::filesystem::permissions(out / "points", std::filesystem::perms::owner_all);
  INFO(outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains((out / "points").string()));
}

TEST_CASE("a point past --point-timeout is killed and recorded as timed out", "[cli][sweep][signals]") {
  Scratch scratch;
  // About 8,000 simulated tokens: tens of seconds, far past the timeout.
  const std::string file =
      scratch.write("slow.yaml",
                    "base:\n  hardware: tiny\n  model: tiny-dense\n  workload: {batch: 4, decode_tokens: 2000}\n"
                    "engine: sim\naxes:\n  workload.prompt_tokens: [16]\nmetrics: [metrics.total_cycles]\n");
  const std::filesystem::path out = scratch.path() / "out";
  const Outcome outcome = run_wafersim({"sweep", file, "--out", out.string(), "--point-timeout", "0.5"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 0);
  const Csv csv = read_csv(out / "results.csv");
  REQUIRE(csv.rows.size() == 1);
  CHECK(csv.values("status") == std::vector<std::string>{"failed"});
  CHECK_THAT(csv.values("error").at(0), Catch::StartsWith("timed out after 0.5 s (--point-timeout)"));
  const nlohmann::json record = nlohmann::json::parse(point_records(out).begin()->second);
  CHECK(record["exit_code"] == 124);
}

TEST_CASE("a --point-timeout that is not a number of seconds is bad input", "[cli][sweep][signals]") {
  // NaN passes every range check made of comparisons; taken, it would mean no limit.
  for (const std::string timeout : {"nan", "-1", "inf"}) {
    INFO(timeout);
    const Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--dry-run", "--point-timeout", timeout});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains("--point-timeout"));
  }
}
