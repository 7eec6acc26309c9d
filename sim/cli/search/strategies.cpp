#include "sim/cli/search/strategies.h"

#include <random>
#include <set>

#include <fmt/format.h>

#include "sim/reports/command_error.h"

namespace wafersim::cli::search {

using reports::CommandError;
using reports::kExitBadInput;

namespace {

// The number of combinations, or SIZE_MAX when it passes `limit`.
size_t combinations(const std::vector<size_t>& sizes, size_t limit) {
  size_t count = 1;
  for (size_t size : sizes) {
    if (count > limit / size) return SIZE_MAX;
    count *= size;
  }
  return count;
}

// The n-th combination, the first axis varying slowest (as a sweep's grid).
Choice combination(const std::vector<size_t>& sizes, size_t n) {
  Choice choice(sizes.size());
  for (size_t a = sizes.size(); a-- > 0;) {
    choice[a] = int(n % sizes[a]);
    n /= sizes[a];
  }
  return choice;
}

void grid(const StrategyInput& input, const ScoreBatch& score) {
  const size_t count = combinations(input.sizes, input.budget);
  if (count == SIZE_MAX || count + 1 > input.budget)
    throw CommandError(kExitBadInput,
                       fmt::format("--strategy grid: the grid and the default plan are more than --points {} points; "
                                   "raise --points, vary fewer values or use --strategy random or coordinate",
                                   input.budget));
  std::vector<Choice> choices = {Choice(input.sizes.size(), kBaseValue)};
  for (size_t n = 0; n < count; ++n) choices.push_back(combination(input.sizes, n));
  score(choices);
}

void random(const StrategyInput& input, const ScoreBatch& score) {
  const size_t draws = input.budget - 1;  // the default plan is the first point
  const size_t count = combinations(input.sizes, draws);
  std::vector<Choice> choices = {Choice(input.sizes.size(), kBaseValue)};
  if (count != SIZE_MAX) {  // the whole grid fits the budget
    for (size_t n = 0; n < count; ++n) choices.push_back(combination(input.sizes, n));
  } else {
    // The engine's raw output is the same on every platform; the library's distributions are not.
    std::mt19937_64 engine(input.seed);
    std::set<Choice> drawn;
    while (drawn.size() < draws) {
      Choice choice(input.sizes.size());
      for (size_t a = 0; a < choice.size(); ++a) choice[a] = int(engine() % input.sizes[a]);
      if (drawn.insert(choice).second) choices.push_back(choice);
    }
  }
  score(choices);
}

size_t coordinate(const StrategyInput& input, const ScoreBatch& score) {
  Choice current(input.sizes.size(), kBaseValue);
  std::optional<double> current_score = score({current}).front();
  for (size_t pass = 1;; ++pass) {
    bool improved = false;
    for (size_t a = 0; a < input.sizes.size(); ++a) {
      std::vector<Choice> line;
      size_t fresh = 0;
      for (size_t v = 0; v < input.sizes[a]; ++v) {
        Choice candidate = current;
        candidate[a] = int(v);
        if (candidate == current) continue;
        const bool is_new = !input.known(candidate);
        if (is_new && input.evaluated() + fresh >= input.budget) break;
        fresh += is_new ? 1 : 0;
        line.push_back(candidate);
      }
      if (line.empty()) continue;
      const std::vector<std::optional<double>> scores = score(line);
      for (size_t i = 0; i < line.size(); ++i)
        if (scores[i] && (!current_score || *scores[i] > *current_score)) {
          current = line[i];
          current_score = scores[i];
          improved = true;
        }
    }
    if (!improved || input.evaluated() >= input.budget) return pass;
  }
}

}  // namespace

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"grid", "random", "coordinate"};
  return names;
}

size_t run_strategy(const std::string& strategy, const StrategyInput& input, const ScoreBatch& score) {
  if (strategy == "grid") {
    grid(input, score);
    return 1;
  }
  if (strategy == "random") {
    random(input, score);
    return 1;
  }
  return coordinate(input, score);
}

}  // namespace wafersim::cli::search
