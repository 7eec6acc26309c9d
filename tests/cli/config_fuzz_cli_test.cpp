// A few mutated experiments through the built binary: `validate` exits 0 (with
// nothing on stderr), 2 (bad input) or 3 (does not fit) with one line on stderr;
// never 1 (an internal error) and never a crash. The many fast cases run in-process
// in tests/models/config_fuzz_test.cpp; WAFERSIM_FUZZ_CASES=N runs N here too.
#include <algorithm>

#include <catch2/catch.hpp>

#include "../models/config_mutator.h"
#include "run_wafersim.h"

using namespace wafersim::testing;

TEST_CASE("validate on mutated experiments exits 0, 2 or 3 with at most one line", "[cli][fuzz]") {
  std::vector<std::string> seeds;
  for (const char* folder : {"good", "experiments"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(WAFERSIM_TEST_DATA) + "/" + folder))
      if (entry.path().extension() == ".yaml") seeds.push_back(entry.path().string());
  std::sort(seeds.begin(), seeds.end());
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
