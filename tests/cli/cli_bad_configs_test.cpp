// Every file in tests/data/bad is refused with exit code 2 and one line naming
// the file and line. Each file states the message it must produce in a first
// line "# expect: ..." and may give extra arguments in "# args: ...".
#include <regex>

#include <catch2/catch.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

namespace {

struct BadCase {
  std::string path;
  std::string expect;
  std::vector<std::string> args;
};

BadCase read_case(const std::filesystem::path& file) {
  BadCase bad{file.string(), "", {}};
  std::istringstream lines(read_all(file));
  for (std::string line; std::getline(lines, line) && line.rfind("# ", 0) == 0;) {
    if (line.rfind("# expect: ", 0) == 0) bad.expect = line.substr(10);
    if (line.rfind("# args: ", 0) == 0) {
      std::istringstream words(line.substr(8));
      for (std::string word; words >> word;) bad.args.push_back(word);
    }
  }
  // An empty file cannot carry its expectation.
  if (std::filesystem::file_size(file) == 0) bad.expect = "empty file";
  return bad;
}

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> cases;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(WAFERSIM_TEST_DATA) + "/bad"))
    if (entry.is_regular_file()) cases.push_back(read_case(entry.path()));
  std::sort(cases.begin(), cases.end(), [](const BadCase& a, const BadCase& b) { return a.path < b.path; });
  return cases;
}

}  // namespace

TEST_CASE("the bad corpus covers at least 25 cases, each stating its message", "[cli][bad]") {
  const std::vector<BadCase> cases = bad_cases();
  CHECK(cases.size() >= 25);
  for (const BadCase& bad : cases) {
    INFO(bad.path);
    CHECK_FALSE(bad.expect.empty());
  }
}

TEST_CASE("validate refuses every bad file with exit 2 and one located line", "[cli][bad]") {
  for (const BadCase& bad : bad_cases()) {
    std::vector<std::string> args = {"validate", bad.path};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    const Outcome outcome = run_wafersim(args);
    INFO(bad.path << "\nstderr: " << outcome.err);
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.out.empty());
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(bad.expect));
    // Errors in the file name it and a line; errors in an override name the override.
    const std::string located = bad.args.empty() ? "error: " + bad.path + ":" : "error: --set ";
    CHECK_THAT(outcome.err, Catch::StartsWith(located));
    if (bad.args.empty()) CHECK(std::isdigit(static_cast<unsigned char>(outcome.err[located.size()])));
  }
}

TEST_CASE("a 10 MB file is refused without being parsed", "[cli][bad]") {
  Scratch scratch;
  std::string text = "hardware: tiny\n";
  while (text.size() < 10'000'000) text += "# filler filler filler filler filler filler filler filler filler\n";
  const std::string path = scratch.write("large.yaml", text);
  const Outcome outcome = run_wafersim({"validate", path});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err == "error: " + path + ": larger than 1 MiB; not an experiment file\n");
}

TEST_CASE("a missing file, a folder and a device are refused", "[cli][bad]") {
  Scratch scratch;
  const std::string missing = (scratch.path() / "missing.yaml").string();
  CHECK(run_wafersim({"validate", missing}).err == "error: " + missing + ": cannot read: No such file or directory\n");
  const Outcome folder = run_wafersim({"validate", scratch.path().string()});
  CHECK(folder.exit_code == 2);
  CHECK(folder.err == "error: " + scratch.path().string() + ": cannot read: is a directory\n");
  // Reading /dev/zero would never end: only regular files are read.
  const Outcome device = run_wafersim({"validate", "/dev/zero"});
  CHECK(device.exit_code == 2);
  CHECK(device.err == "error: /dev/zero: cannot read: not a regular file\n");
}
