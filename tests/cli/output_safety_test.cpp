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

}  // namespace

TEST_CASE("a JSON result refuses an empty name, writes through devices and FIFOs, and keeps symbolic links",
          "[cli][output]") {
  Outcome outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--json", ""});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("--json") && Catch::Contains("empty"));

  Scratch scratch;
  // A FIFO stays a FIFO: its reader gets the JSON.
  const std::string fifo = (scratch.path() / "results.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string copy = (scratch.path() / "from-fifo.json").string();
  const Outcome piped =
      run_shell("cat " + shell_quoted(fifo) + " > " + shell_quoted(copy) + " & " + shell_quoted(WAFERSIM_BINARY) +
                " analytic " + shell_quoted(kTinyDense) + " --quiet --json " + shell_quoted(fifo) + "; wait");
  CHECK(piped.exit_code == 0);
  struct stat status {};
  REQUIRE(::lstat(fifo.c_str(), &status) == 0);
  CHECK(S_ISFIFO(status.st_mode));
  CHECK(nlohmann::json::parse(read_all(copy))["engine"] == "analytic");

  // A link to a file: the file gets the result, the link stays a link.
  const std::filesystem::path target = scratch.path() / "target.json", link = scratch.path() / "link.json";
  scratch.write("target.json", "old");
  std::filesystem::create_symlink(target, link);
  CHECK(run_wafersim({"analytic", kTinyDense, "--quiet", "--json", link.string()}).exit_code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(nlohmann::json::parse(read_all(target))["engine"] == "analytic");

  // A link to nothing is refused rather than replaced.
  std::filesystem::remove(target);
  outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--json", link.string()});
  CHECK(outcome.exit_code == 2);
  CHECK(std::filesystem::is_symlink(link));
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
