// Mutations of the good experiment files and of --set strings hold the loader to
// its contract: it accepts the input or throws config::ConfigError whose message
// is one line naming file:line (or the override); never another exception, never
// a crash. WAFERSIM_FUZZ_CASES=N runs N cases per test instead of the default.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "models/config/text.h"
#include "sim/experiment/experiment.h"
#include "tests/models/config_mutator.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

struct Seed {
  std::string path;
  std::string text;
};

std::vector<Seed> seed_files() {
  std::vector<Seed> seeds;
  for (const char* folder : {"good", "experiments"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(WAFERSIM_TEST_DATA) + "/" + folder))
      if (entry.path().extension() == ".yaml") seeds.push_back({entry.path().string(), ""});
  std::sort(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) { return a.path < b.path; });
  for (Seed& seed : seeds) {
    std::ifstream in(seed.path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    seed.text = text.str();
  }
  return seeds;
}

std::vector<std::string> parameter_paths() {
  std::vector<std::string> paths;
  for (const config::ParamSpec& spec : experiment_schema().params()) paths.push_back(spec.path);
  return paths;
}

size_t accepted = 0;  // cases the loader accepted, to show the mutations are not all fatal

// Loads and checks one case; returns what went wrong ("" when the contract holds).
std::string contract_broken(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides) {
  static const std::regex located("[^ ]+:[0-9]+(:[0-9]+)?: [^\n]+");
  try {
    load_experiment_text(text, name, overrides);
    ++accepted;
    return "";
  } catch (const config::ConfigError& e) {
    const std::string message = e.what();
    if (message.find('\n') != std::string::npos || message.find('\r') != std::string::npos)
      return "message of more than one line: " + config::one_line(message);
    if (message.rfind("--set ", 0) == 0) return "";
    if (message.rfind("default", 0) == 0) return "blames a default: " + message;
    if (!std::regex_match(message, located)) return "message without file:line: " + message;
    return "";
  } catch (const std::exception& e) {
    return std::string("not a ConfigError: ") + e.what();
  } catch (...) {
    return "not a std::exception";
  }
}

void report(size_t cases, std::chrono::steady_clock::time_point start) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  WARN(cases << " cases (" << accepted << " accepted) in " << ms << " ms");
}

}  // namespace

TEST_CASE("mutated experiment files are accepted or refused with one located line", "[config][fuzz]") {
  const std::vector<Seed> seeds = seed_files();
  REQUIRE(seeds.size() >= 3);
  const size_t cases = fuzz_cases(10000);
  const auto start = std::chrono::steady_clock::now();
  FuzzRandom random(20261203);
  for (size_t i = 0; i < cases; ++i) {
    const Seed& seed = random.pick(seeds);
    const std::string text = mutate(seed.text, random);
    const std::string broken = contract_broken(text, seed.path, {});
    if (!broken.empty()) {
      INFO("case " << i << " from " << seed.path << ": " << config::one_line(text));
      FAIL(broken);
    }
  }
  report(cases, start);
}

TEST_CASE("mutated --set overrides are accepted or refused with one line", "[config][fuzz]") {
  const std::vector<Seed> seeds = seed_files();
  const std::vector<std::string> paths = parameter_paths();
  const size_t cases = fuzz_cases(10000);
  const auto start = std::chrono::steady_clock::now();
  FuzzRandom random(3122026);
  for (size_t i = 0; i < cases; ++i) {
    const Seed& seed = random.pick(seeds);
    std::vector<std::string> overrides;
    for (size_t n = 1 + random.below(3); n > 0; --n) overrides.push_back(fuzz_override(paths, random));
    // Now and then the file is mutated too.
    const std::string text = random.below(4) == 0 ? mutate(seed.text, random) : seed.text;
    const std::string broken = contract_broken(text, seed.path, overrides);
    if (!broken.empty()) {
      std::string shown;
      for (const std::string& item : overrides) shown += " --set " + config::one_line(item);
      INFO("case " << i << " from " << seed.path << ":" << shown << "\n" << config::one_line(text));
      FAIL(broken);
    }
  }
  report(cases, start);
}
