#pragma once
// What `wafersim search` explores and how it ranks a point: the knobs it
// varies (--vary KEY=SPEC), the figures of a result it optimises or bounds
// (--objective, --pareto, --constraint). Each parser refuses bad input with a
// one-line CommandError naming the argument (exit code 2). docs/SEARCH.md.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wafersim::cli::search {

// One --vary KEY=SPEC: an override path (a parameter or a whole section, as a
// sweep axis) and the values it takes, each as YAML text.
struct VaryAxis {
  std::string path;
  std::string argument;  // "KEY=SPEC" as given, for messages
  std::vector<std::string> values;
};
// SPEC: a list "a,b,c", "range:START:STOP[:STEP]" (STOP included when reached)
// or "log2:START:STOP" (powers of two). Section file names are made absolute.
VaryAxis parse_vary(const std::string& argument);

// A figure of a point's result (the JSON `wafersim analytic` writes) that the
// search ranks points by.
struct Figure {
  std::string name;       // "tokens_per_second_per_user", or a result path for a constraint
  std::string json_path;  // "metrics.tokens_per_second_per_user"
  bool higher_is_better = true;
};
// The names --objective takes.
const std::vector<std::string>& objective_names();
Figure objective_figure(const std::string& name);
// --pareto: an objective's name or `wafers`.
Figure pareto_figure(const std::string& name);

// --constraint KEY<=V or KEY>=V; KEY is a figure's name or a path of the
// result (`metrics.per_token_latency_us.p99`, `config.workload.batch`).
struct Constraint {
  std::string argument;
  std::string json_path;
  bool at_most = true;
  double bound = 0;
};
Constraint parse_constraint(const std::string& argument);

// The number at `json_path` of a result; nullopt when absent or not a number.
std::optional<double> figure_value(const nlohmann::json& result, const std::string& json_path);
// True when the result holds the figure and it is within the bound.
bool satisfies(const nlohmann::json& result, const Constraint& constraint);
// True for figures only a run with the prefill has (time to first token, prefill.*).
bool needs_prefill(const std::string& json_path);

}  // namespace wafersim::cli::search
