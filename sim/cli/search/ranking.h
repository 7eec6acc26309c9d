#pragma once
// How a search ranks its points: the objective (signed so that higher is
// better), the constraints a point must meet, the best point and the Pareto
// front of the objective against a second figure; and the files that list them.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/search/evaluator.h"
#include "sim/cli/search/search_space.h"

namespace wafersim::cli::search {

struct Ranking {
  Figure objective;
  Figure pareto;  // the second figure of the front (default: wafers)
  std::vector<Constraint> constraints;

  // The objective, higher is better; nullopt when the point failed, does
  // not fit, lacks the figure or breaks a constraint.
  std::optional<double> score(const Evaluated& point) const;
  // The highest score, the first evaluated among equals; nullptr when no point is feasible.
  const Evaluated* best(const std::vector<Evaluated>& points) const;
  // The feasible points no other feasible point beats in both figures, by the second figure.
  std::vector<const Evaluated*> pareto_front(const std::vector<Evaluated>& points) const;
};

// One row per point: the round, each axis's value, the objective, the second
// figure, the constraints' figures, feasible, status, error, config_hash.
std::string points_csv(const std::vector<std::string>& columns, const std::vector<const Evaluated*>& points,
                       const Ranking& ranking);

// A point as search.json lists it.
nlohmann::json point_json(const std::vector<std::string>& columns, const Evaluated& point, const Ranking& ranking);

}  // namespace wafersim::cli::search
