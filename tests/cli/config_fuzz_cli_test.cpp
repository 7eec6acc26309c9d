// A few mutated experiments through the built binary: `validate` exits 0 (with
// nothing on stderr), 2 (bad input) or 3 (does not fit) with one line on stderr;
// never 1 (an internal error) and never a crash; `analytic` and `map`, which
// write, leave nothing behind but their output. The many fast cases run in-process
// in tests/models/config_fuzz_test.cpp; WAFERSIM_FUZZ_CASES=N runs N here too.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../models/config_mutator.h"
#include "run_wafersim.h"

using namespace wafersim::testing;

namespace {

std::vector<std::string> seed_experiments() {
  std::vector<std::string> seeds;
  for (const char* folder : {"good", "experiments"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(WAFERSIM_TEST_DATA) + "/" + folder))
      if (entry.path().extension() == ".yaml") seeds.push_back(entry.path().string());
  std::sort(seeds.begin(), seeds.end());
  return seeds;
}

// Every file under `folder`, relative to it.
std::vector<std::string> files_under(const std::filesystem::path& folder) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    files.push_back(std::filesystem::relative(entry.path(), folder).string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("validate on mutated experiments exits 0, 2 or 3 with at most one line", "[cli][fuzz]") {
  const std::vector<std::string> seeds = seed_experiments();
  REQUIRE_FALSE(seeds.empty());
  const std::vector<std::string> paths = {"hardware.grid_width", "hardware.fabric.colors", "model.n_heads",
                                          "model.moe.top_k",     "workload.batch",         "workload.seed",
                                          "mapping.strips",      "sim.contention"};
  Scratch scratch;
  FuzzRandom random(42);
  const size_t cases = fuzz_cases(40);
  for (size_t i = 0; i < cases; ++i) {
    const std::string& seed = random.pick(seeds);
    // The seeds name built-in presets only, so the copies need no neighbours.
    const std::string file = scratch.write("case" + std::to_string(i) + ".yaml", mutate(read_all(seed), random));
    std::vector<std::string> args = {"validate", file};
    if (random.below(2)) {
      std::string override_text = fuzz_override(paths, random);
      std::replace(override_text.begin(), override_text.end(), '\0', '0');  // argv cannot hold a NUL
      args.insert(args.end(), {"--set", override_text});
    }
    const Outcome outcome = run_wafersim(args);
    INFO("case " << i << " from " << seed << ": " << read_all(file) << "\nargs:" << args.back()
                 << "\nstderr: " << outcome.err);
    CHECK((outcome.exit_code == 0 || outcome.exit_code == 2 || outcome.exit_code == 3));
    if (outcome.exit_code == 0)
      CHECK(outcome.err.empty());
    else
      CHECK(is_one_line(outcome.err));
  }
}

// The commands that write: a result where asked and nothing anywhere else (the
// working folder, TMPDIR, HOME, next to the experiment), no partial output after
// a refusal (exit 3 with --json leaves its refused record, and only that), and
// an end. A case that runs past kHangSeconds is killed and fails; the slowest
// case's wall time is printed for the record, never asserted.
TEST_CASE("analytic and map on mutated experiments write only their output", "[cli][fuzz]") {
  constexpr int kHangSeconds = 600;
  const std::vector<std::string> seeds = seed_experiments();
  REQUIRE_FALSE(seeds.empty());
  Scratch scratch;
  const std::filesystem::path root = scratch.path();
  for (const char* folder : {"in", "out", "work", "tmp", "home"}) std::filesystem::create_directories(root / folder);
  FuzzRandom random(7);
  const size_t cases = fuzz_cases(20);
  double slowest_seconds = 0;
  size_t exits[4] = {0, 0, 0, 0};
  // First every seed as it is through both commands, so the cases that write a result are always among them.
  const size_t unmutated = 2 * seeds.size();
  for (size_t i = 0; i < unmutated + cases; ++i) {
    const std::string& seed = i < unmutated ? seeds[i / 2] : random.pick(seeds);
    const std::string file = (root / "in" / "case.yaml").string();
    std::ofstream(file, std::ios::binary) << (i < unmutated ? read_all(seed) : mutate(read_all(seed), random));
    const std::string command = (i < unmutated ? i % 2 : random.below(2)) ? "analytic" : "map";
    const std::string result = (root / "out" / "result.json").string();
    const std::string line = "cd " + shell_quoted((root / "work").string()) +
                             " && TMPDIR=" + shell_quoted((root / "tmp").string()) +
                             " HOME=" + shell_quoted((root / "home").string()) + " timeout -s KILL " +
                             std::to_string(kHangSeconds) + " " + shell_quoted(WAFERSIM_BINARY) + " " + command + " " +
                             shell_quoted(file) + " --quiet --json " + shell_quoted(result);
    const auto start = std::chrono::steady_clock::now();
    const Outcome outcome = run_shell(line);
    slowest_seconds =
        std::max(slowest_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    INFO("case " << i << " (" << command << ") from " << seed << ": " << read_all(file) << "\nstderr: " << outcome.err);
    REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 2 || outcome.exit_code == 3));
    ++exits[outcome.exit_code];
    CHECK(files_under(root / "in") == std::vector<std::string>{"case.yaml"});
    CHECK(files_under(root / "work").empty());
    CHECK(files_under(root / "tmp").empty());
    CHECK(files_under(root / "home").empty());
    const std::vector<std::string> outputs = files_under(root / "out");
    if (outcome.exit_code == 2) {
      CHECK(outputs.empty());
      CHECK(is_one_line(outcome.err));
    } else {
      REQUIRE(outputs == std::vector<std::string>{"result.json"});
      const nlohmann::json written = nlohmann::json::parse(read_all(result));
      CHECK(written.value("fits", true) == (outcome.exit_code == 0));
      std::filesystem::remove(result);
    }
  }
  WARN(unmutated + cases << " cases: " << exits[0] << " ran, " << exits[2] << " bad input, " << exits[3]
                         << " did not fit; slowest " << slowest_seconds << " s");
}
