// A sweep file checked before anything runs: `validate` recognises it and
// `sweep --dry-run` lists its points, each validated, writing nothing.
#include <filesystem>
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sweep_test_support.h"

using namespace wafersim::testing;

TEST_CASE("validate checks a sweep file: every point, and nothing runs", "[cli][sweep]") {
  const Outcome good = run_wafersim({"validate", sweep_data("grid.yaml")});
  INFO(good.err);
  CHECK(good.exit_code == 0);
  CHECK(good.out.find("ok, a sweep of 6 point(s), every one valid (engine analytic") != std::string::npos);

  const Outcome bad = run_wafersim({"validate", sweep_data("bad/bad_base_key.yaml")});
  CHECK(bad.exit_code == 2);
  CHECK(is_one_line(bad.err));
  CHECK(bad.err.find("unknown section 'base'") == std::string::npos);
  CHECK(bad.err.find("bad_base_key.yaml:7:5: unknown key 'bach' in workload") != std::string::npos);

  CHECK(run_wafersim({"validate", sweep_data("grid.yaml"), "--set", "workload.batch=2"}).exit_code == 2);
}

TEST_CASE("sweep --dry-run lists the validated points and writes nothing", "[cli][sweep]") {
  Scratch scratch;
  const std::string out = (scratch.path() / "out").string();
  const Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out, "--dry-run"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  CHECK(std::regex_search(outcome.out,
                          std::regex("point 1 of 6 \\(workload.batch=1, hardware.fabric.link_bytes_per_cycle=2\\): "
                                     "config hash [0-9a-f]{16}\n")));
  CHECK(outcome.out.find("point 6 of 6 (workload.batch=4, hardware.fabric.link_bytes_per_cycle=8)") !=
        std::string::npos);
  CHECK(outcome.out.find("6 point(s), engine analytic, every one valid; --dry-run: nothing run") != std::string::npos);
  CHECK(!std::filesystem::exists(out));

  // Without --out it is a dry run or an error.
  CHECK(run_wafersim({"sweep", sweep_data("grid.yaml"), "--dry-run"}).exit_code == 0);
  const Outcome no_out = run_wafersim({"sweep", sweep_data("grid.yaml")});
  CHECK(no_out.exit_code == 2);
  CHECK(no_out.err.find("--out") != std::string::npos);
  CHECK(run_wafersim({"sweep", sweep_data("bad/bad_range.yaml"), "--dry-run"}).exit_code == 2);
}

// The points are loaded from a scratch file in TMPDIR: one that cannot hold
// it is the user's to fix, named in one line with exit 2.
TEST_CASE("a TMPDIR that is missing or read-only is named, exit 2", "[cli][sweep]") {
  Scratch scratch;
  const std::string not_a_folder = scratch.write("file", "");
  const std::string missing = (scratch.path() / "missing").string();
  const std::string out = (scratch.path() / "out").string();
  for (const std::string& tmpdir : {missing, not_a_folder, std::string("/proc")}) {
    const std::string env = "TMPDIR=" + shell_quoted(tmpdir) + " " + shell_quoted(WAFERSIM_BINARY) + " ";
    for (const std::string& args : {"validate " + shell_quoted(sweep_data("grid.yaml")),
                                    "sweep " + shell_quoted(sweep_data("grid.yaml")) + " --dry-run",
                                    "sweep " + shell_quoted(sweep_data("grid.yaml")) + " --out " + shell_quoted(out)}) {
      const Outcome outcome = run_shell(env + args);
      INFO(args << " with TMPDIR=" << tmpdir << ": " << outcome.err);
      CHECK(outcome.exit_code == 2);
      CHECK(is_one_line(outcome.err));
      CHECK(outcome.err.find("cannot create a temporary file in " + tmpdir + " (TMPDIR)") != std::string::npos);
    }
  }
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("a point's record keeps each axis value's type", "[cli][sweep]") {
  Scratch scratch;
  const std::string out = (scratch.path() / "out").string();
  const Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out, "--jobs", "2"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  size_t records = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out + "/points")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    const nlohmann::json record = nlohmann::json::parse(read_all(entry.path()));
    INFO(record["axes"].dump());
    CHECK(record["axes"]["workload.batch"].is_number_integer());
    CHECK(record["axes"]["hardware.fabric.link_bytes_per_cycle"].is_number_integer());
    ++records;
  }
  CHECK(records == 6);
  CHECK(!std::filesystem::exists(out + "/sweep.lock"));
}
