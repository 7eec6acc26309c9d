#pragma once
// The three ways `wafersim search` chooses its points (docs/SEARCH.md):
//   grid        every combination of the --vary values;
//   random      --points combinations drawn uniformly without repetition (seeded);
//   coordinate  coordinate descent from the experiment as it is: each axis in
//               turn tries all its values with the others held, keeps the best,
//               and passes repeat until a pass improves nothing (deterministic).
// Every strategy evaluates the default plan (the experiment unchanged) first.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/search/evaluator.h"

namespace wafersim::cli::search {

const std::vector<std::string>& strategy_names();

// Scores the points of one batch: the objective signed so that higher is
// better, or nullopt for a point that failed, does not fit or breaks a
// constraint. Evaluates only what was not evaluated before.
using ScoreBatch = std::function<std::vector<std::optional<double>>(const std::vector<Choice>&)>;

struct StrategyInput {
  std::vector<size_t> sizes;  // values per axis
  size_t budget = 0;          // --points: the most distinct points evaluated, the default's included
  uint64_t seed = 1;          // --seed (random)
  // Distinct points evaluated so far (what the budget counts), and whether a point is one of them.
  std::function<size_t()> evaluated;
  std::function<bool(const Choice&)> known;
};

// Runs `strategy` to its end; returns the coordinate-descent passes made (1 for the others).
size_t run_strategy(const std::string& strategy, const StrategyInput& input, const ScoreBatch& score);

}  // namespace wafersim::cli::search
