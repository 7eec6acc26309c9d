#pragma once
// Runs wafersim quietly with --json and returns the document it wrote,
// requiring the exit code the test expects.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

namespace wafersim::testing {

inline nlohmann::json run_json(std::vector<std::string> args, int expected_exit = 0, Outcome* outcome_out = nullptr) {
  Scratch scratch;
  const std::string out = (scratch.path() / "result.json").string();
  if (std::find(args.begin(), args.end(), "--quiet") == args.end()) args.push_back("--quiet");
  args.insert(args.end(), {"--json", out});
  const Outcome outcome = run_wafersim(args);
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == expected_exit);
  if (outcome_out) *outcome_out = outcome;
  return nlohmann::json::parse(read_all(out));
}

}  // namespace wafersim::testing
