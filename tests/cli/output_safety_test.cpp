// Output paths a user can get wrong: results never land somewhere else than
// asked, and nothing special is ever replaced by a regular file.
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep_test_support.h"

using namespace wafersim::testing;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";

// Runs wafersim with a bound on its time, so a write that blocks fails the test
// (exit 124 from timeout) instead of hanging it. A passing run ends in well
// under a second; the bound is ten minutes so that no load can reach it.
Outcome run_bounded(const std::vector<std::string>& args) {
  std::string command = "timeout 600 " + shell_quoted(WAFERSIM_BINARY);
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  return run_shell(command);
}

}  // namespace

TEST_CASE("a JSON result refuses an empty name, writes through devices, and refuses FIFOs and symbolic links",
          "[cli][output]") {
  Outcome outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--json", ""});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("--json") && Catch::Contains("empty"));

  // A character device is written through, never replaced.
  CHECK(run_wafersim({"analytic", kTinyDense, "--quiet", "--json", "/dev/null"}).exit_code == 0);
  struct stat status {};
  REQUIRE(::lstat("/dev/null", &status) == 0);
  CHECK(S_ISCHR(status.st_mode));

  Scratch scratch;
  // A FIFO without a reader would block for ever: refused before the work.
  const std::string fifo = (scratch.path() / "results.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  outcome = run_bounded({"analytic", kTinyDense, "--json", fifo});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.out.empty());  // no table: nothing ran
  CHECK(outcome.err == "error: cannot write " + fifo + ": it is a FIFO, not a regular file\n");
  REQUIRE(::lstat(fifo.c_str(), &status) == 0);
  CHECK(S_ISFIFO(status.st_mode));

  // A link is never followed: its target and the link stay as they were.
  const std::filesystem::path target = scratch.path() / "target.json", link = scratch.path() / "link.json";
  scratch.write("target.json", "old");
  std::filesystem::create_symlink(target, link);
  outcome = run_wafersim({"analytic", kTinyDense, "--json", link.string()});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.out.empty());
  CHECK(outcome.err == "error: cannot write " + link.string() + ": it is a symbolic link, not a regular file\n");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read_all(target) == "old");

  // A link to nothing is refused rather than replaced.
  std::filesystem::remove(target);
  outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--json", link.string()});
  CHECK(outcome.exit_code == 2);
  CHECK(std::filesystem::is_symlink(link));
  CHECK_FALSE(std::filesystem::exists(target));
}

TEST_CASE("a symbolic link planted in an output folder is refused, never written through", "[cli][output][sweep]") {
  Scratch scratch;
  const std::filesystem::path victim = scratch.path() / "victim.txt";
  scratch.write("victim.txt", "precious");

  SECTION("a sweep's point file") {
    const std::filesystem::path out = scratch.path() / "out";
    REQUIRE(run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out.string()}).exit_code == 0);
    std::filesystem::path point;
    for (const auto& entry : std::filesystem::directory_iterator(out / "points"))
      if (entry.path().extension() == ".yaml") point = entry.path();
    REQUIRE(!point.empty());
    std::filesystem::remove(point);
    std::filesystem::create_symlink(victim, point);
    const Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out.string(), "--resume"});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(point.string()) && Catch::Contains("symbolic link"));
    CHECK(std::filesystem::is_symlink(point));
  }
  SECTION("a sweep's points folder") {
    const std::filesystem::path out = scratch.path() / "out", elsewhere = scratch.path() / "elsewhere";
    std::filesystem::create_directories(out);
    std::filesystem::create_directories(elsewhere);
    std::filesystem::create_directory_symlink(elsewhere, out / "points");
    const Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out.string()});
    CHECK(outcome.exit_code == 2);
    CHECK_THAT(outcome.err, Catch::Contains((out / "points").string()) && Catch::Contains("symbolic link"));
    CHECK(std::filesystem::is_empty(elsewhere));
  }
  SECTION("heatmaps.json in a --heatmaps folder") {
    const std::filesystem::path folder = scratch.path() / "heatmaps";
    std::filesystem::create_directories(folder);
    std::filesystem::create_symlink(victim, folder / "heatmaps.json");
    const Outcome outcome = run_wafersim({"map", kTinyDense, "--heatmaps", folder.string()});
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.out.empty());  // refused before mapping
    CHECK(outcome.err == "error: cannot write " + (folder / "heatmaps.json").string() +
                             ": it is a symbolic link, not a regular file\n");
  }
  CHECK(read_all(victim) == "precious");
}

TEST_CASE("output files honour the umask and a replaced file keeps its mode", "[cli][output]") {
  Scratch scratch;
  const std::string json = (scratch.path() / "result.json").string(), csv = (scratch.path() / "csv").string();
  const auto mode_of = [](const std::string& path) {
    struct stat status {};
    REQUIRE(::lstat(path.c_str(), &status) == 0);
    return status.st_mode & 07777;
  };
  const std::string run = shell_quoted(WAFERSIM_BINARY) + " analytic " + shell_quoted(kTinyDense) + " --quiet";
  REQUIRE(run_shell("umask 077; " + run + " --json " + shell_quoted(json) + " --csv " + shell_quoted(csv)).exit_code ==
          0);
  CHECK(mode_of(json) == 0600);
  CHECK(mode_of(csv + "/per_token.csv") == 0600);

  REQUIRE(::chmod(json.c_str(), 0640) == 0);
  REQUIRE(run_shell("umask 022; " + run + " --json " + shell_quoted(json)).exit_code == 0);
  CHECK(mode_of(json) == 0640);
  CHECK(parses_as_json(read_all(json)));

  std::filesystem::remove(json);
  REQUIRE(run_shell("umask 002; " + run + " --json " + shell_quoted(json)).exit_code == 0);
  CHECK(mode_of(json) == 0664);
}

TEST_CASE("a FIFO as the trace file or in a heatmaps folder is refused before the work, not blocked on after it",
          "[cli][output][trace]") {
  Scratch scratch;
  const std::string fifo = (scratch.path() / "trace.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Outcome outcome = run_bounded({"analytic", kTinyDense, "--trace", fifo});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.out.empty());
  CHECK(outcome.err == "error: cannot write " + fifo + ": it is a FIFO, not a regular file\n");

  const std::filesystem::path folder = scratch.path() / "heatmaps";
  std::filesystem::create_directories(folder);
  const std::string index = (folder / "heatmaps.json").string(), array = (folder / "wafer0_region_id.npy").string();
  for (const std::string& special : {index, array}) {
    REQUIRE(::mkfifo(special.c_str(), 0600) == 0);
    for (const char* command : {"map", "run"}) {
      INFO(command << " with a FIFO at " << special);
      outcome = run_bounded({command, kTinyDense, "--heatmaps", folder.string()});
      CHECK(outcome.exit_code == 2);
      CHECK(outcome.out.empty());
      CHECK(outcome.err == "error: cannot write " + special + ": it is a FIFO, not a regular file\n");
    }
    std::filesystem::remove(special);
  }
}
TEST_CASE("sweep refuses an empty --out, and --resume of a folder another sweep file made", "[cli][sweep][output]") {
  Outcome outcome = run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", ""});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("--out"));

  Scratch scratch;
  const std::string out = (scratch.path() / "out").string();
  REQUIRE(run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out}).exit_code == 0);
  const std::string results = read_all(out + "/results.csv"), resolved = read_all(out + "/sweep.yaml");

  outcome = run_wafersim({"sweep", sweep_data("zip.yaml"), "--out", out, "--resume"});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("grid.yaml") && Catch::Contains("zip.yaml"));
  CHECK(read_all(out + "/results.csv") == results);  // nothing replaced
  CHECK(read_all(out + "/sweep.yaml") == resolved);

  // The same file, or the folder's own sweep.yaml, resumes it.
  CHECK(run_wafersim({"sweep", sweep_data("grid.yaml"), "--out", out, "--resume"}).exit_code == 0);
  CHECK(run_wafersim({"sweep", out + "/sweep.yaml", "--out", out, "--resume"}).exit_code == 0);
  const std::string first_line = read_all(out + "/sweep.yaml").substr(0, resolved.find('\n'));
  CHECK(first_line == resolved.substr(0, resolved.find('\n')));  // still the sweep of grid.yaml
  CHECK_THAT(first_line, Catch::EndsWith("grid.yaml"));
}
