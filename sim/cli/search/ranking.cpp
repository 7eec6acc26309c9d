#include "sim/cli/search/ranking.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/config/text.h"
#include "sim/cli/sweep/results.h"

namespace wafersim::cli::search {

namespace {

const nlohmann::json& result_of(const Evaluated& point) {
  static const nlohmann::json none;
  const auto found = point.record.find("result");
  return found == point.record.end() ? none : *found;
}

std::string number_text(const std::optional<double>& value) {
  return value ? config::format_number(*value) : std::string();
}

std::optional<double> figure_of(const Evaluated& point, const Figure& figure) {
  return figure_value(result_of(point), figure.json_path);
}

// The second figure signed so that higher is better.
std::optional<double> signed_figure(const Evaluated& point, const Figure& figure) {
  const std::optional<double> value = figure_of(point, figure);
  if (!value) return std::nullopt;
  return figure.higher_is_better ? *value : -*value;
}

}  // namespace

std::optional<double> Ranking::score(const Evaluated& point) const {
  if (point.record.value("status", "") != "ok") return std::nullopt;
  for (const Constraint& constraint : constraints)
    if (!satisfies(result_of(point), constraint)) return std::nullopt;
  return signed_figure(point, objective);
}

const Evaluated* Ranking::best(const std::vector<Evaluated>& points) const {
  const Evaluated* best = nullptr;
  std::optional<double> best_score;
  for (const Evaluated& point : points)
    if (const std::optional<double> s = score(point); s && (!best_score || *s > *best_score)) {
      best = &point;
      best_score = s;
    }
  return best;
}

std::vector<const Evaluated*> Ranking::pareto_front(const std::vector<Evaluated>& points) const {
  struct Candidate {
    const Evaluated* point;
    double first, second;
  };
  std::vector<Candidate> feasible;
  for (const Evaluated& point : points) {
    const std::optional<double> first = score(point);
    const std::optional<double> second = signed_figure(point, pareto);
    if (first && second) feasible.push_back({&point, *first, *second});
  }
  std::vector<Candidate> front;
  for (const Candidate& c : feasible) {
    const bool beaten = std::any_of(feasible.begin(), feasible.end(), [&](const Candidate& other) {
      return other.first >= c.first && other.second >= c.second && (other.first > c.first || other.second > c.second);
    });
    // Points equal in both figures: the first evaluated stands for them.
    const bool repeated = std::any_of(front.begin(), front.end(), [&](const Candidate& kept) {
      return kept.first == c.first && kept.second == c.second;
    });
    if (!beaten && !repeated) front.push_back(c);
  }
  std::stable_sort(front.begin(), front.end(),
                   [](const Candidate& a, const Candidate& b) { return a.second > b.second; });
  std::vector<const Evaluated*> out;
  for (const Candidate& c : front) out.push_back(c.point);
  return out;
}

std::string points_csv(const std::vector<std::string>& columns, const std::vector<const Evaluated*>& points,
                       const Ranking& ranking) {
  std::vector<std::string> header = {"round"};
  header.insert(header.end(), columns.begin(), columns.end());
  header.push_back(ranking.objective.json_path);
  if (ranking.pareto.json_path != ranking.objective.json_path) header.push_back(ranking.pareto.json_path);
  for (const Constraint& constraint : ranking.constraints)
    if (std::find(header.begin(), header.end(), constraint.json_path) == header.end())
      header.push_back(constraint.json_path);
  const size_t figures_end = header.size();
  for (const char* tail : {"feasible", "status", "error", "config_hash"}) header.push_back(tail);
  auto row = [](const std::vector<std::string>& fields) {
    std::string text;
    for (size_t i = 0; i < fields.size(); ++i) text += (i ? "," : "") + sweep::csv_field(fields[i]);
    return text + "\n";
  };
  std::string text = row(header);
  for (const Evaluated* point : points) {
    std::vector<std::string> fields = {std::to_string(point->round)};
    fields.insert(fields.end(), point->point.cells.begin(), point->point.cells.end());
    for (size_t c = 1 + columns.size(); c < figures_end; ++c)
      fields.push_back(number_text(figure_value(result_of(*point), header[c])));
    fields.push_back(ranking.score(*point) ? "true" : "false");
    fields.push_back(point->record.value("status", ""));
    fields.push_back(point->record.value("error", ""));
    fields.push_back(point->point.hash);
    text += row(fields);
  }
  return text;
}

nlohmann::json point_json(const std::vector<std::string>& columns, const Evaluated& point, const Ranking& ranking) {
  nlohmann::json values = nlohmann::json::object();
  for (size_t c = 0; c < columns.size(); ++c) values[columns[c]] = point.point.values[c];
  auto figure = [&](const Figure& f) -> nlohmann::json {
    const std::optional<double> value = figure_of(point, f);
    return value ? nlohmann::json(*value) : nlohmann::json();
  };
  return {
      {"config_hash", point.point.hash},
      {"values", values},
      {"objective", figure(ranking.objective)},
      {"pareto", figure(ranking.pareto)},
      {"feasible", ranking.score(point).has_value()},
      {"status", point.record.value("status", "")},
      {"round", point.round},
      {"file", point.point.hash.empty() ? nlohmann::json() : nlohmann::json("points/" + point.point.hash + ".yaml")}};
}

}  // namespace wafersim::cli::search
