#include "sim/cli/search/search_space.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "models/config/text.h"
#include "sim/cli/sweep/sweep_file.h"
#include "sim/cli/sweep/yaml_tree.h"
#include "sim/reports/command_error.h"
#include "sim/reports/metric_table.h"

namespace wafersim::cli::search {

using reports::CommandError;
using reports::kExitBadInput;

namespace {

// More values than a search could ever try are a typo (a step of 0.0001).
constexpr size_t kMaxValuesPerAxis = 10000;

[[noreturn]] void refuse(const std::string& flag, const std::string& argument, const std::string& why) {
  throw CommandError(kExitBadInput, flag + " " + argument + ": " + why);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

struct Number {
  double value = 0;
  bool integer = false;
};

Number number(const std::string& text, const std::string& argument, const std::string& what) {
  char* end = nullptr;
  const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    refuse("--vary", argument, what + " expects a number, got " + config::quoted(text));
  return {value, text.find_first_of(".eE") == std::string::npos && std::fabs(value) < 9e15};
}

// range:START:STOP[:STEP], as a sweep file's {range: {start, stop, step}}.
std::vector<std::string> range_values(const std::vector<std::string>& fields, const std::string& argument) {
  if (fields.size() != 3 && fields.size() != 4) refuse("--vary", argument, "expects range:START:STOP[:STEP]");
  const Number start = number(fields[1], argument, "range START");
  const Number stop = number(fields[2], argument, "range STOP");
  const Number step = fields.size() == 4 ? number(fields[3], argument, "range STEP") : Number{1, true};
  if (step.value == 0 || (stop.value - start.value) * step.value < 0)
    refuse("--vary", argument, "the range never reaches its STOP from START with that STEP");
  const double count = std::floor((stop.value - start.value) / step.value + 1e-9) + 1;
  if (count > double(kMaxValuesPerAxis))
    refuse("--vary", argument, fmt::format("gives {:.0f} values, more than {}", count, kMaxValuesPerAxis));
  std::vector<std::string> values;
  for (size_t i = 0; i < size_t(count); ++i) {
    const double value = start.value + double(i) * step.value;
    // Rounded to 12 digits so 0.1 steps read 0.3, not 0.30000000000000004.
    values.push_back(start.integer && stop.integer && step.integer
                         ? fmt::format("{:.0f}", value)
                         : config::format_number(std::strtod(fmt::format("{:.12g}", value).c_str(), nullptr)));
  }
  return values;
}

// log2:START:STOP: the powers of two from START to STOP.
std::vector<std::string> log2_values(const std::vector<std::string>& fields, const std::string& argument) {
  if (fields.size() != 3) refuse("--vary", argument, "expects log2:START:STOP");
  const Number start = number(fields[1], argument, "log2 START");
  const Number stop = number(fields[2], argument, "log2 STOP");
  auto power_of_two = [](const Number& n) {
    return n.integer && n.value >= 1 && n.value < 9e15 && (uint64_t(n.value) & (uint64_t(n.value) - 1)) == 0;
  };
  if (!power_of_two(start) || !power_of_two(stop) || stop.value < start.value)
    refuse("--vary", argument, "log2 expects powers of two (1, 2, 4, ...), START no larger than STOP");
  std::vector<std::string> values;
  for (uint64_t value = uint64_t(start.value); value <= uint64_t(stop.value); value *= 2)
    values.push_back(std::to_string(value));
  return values;
}

struct Named {
  const char* name;
  const char* json_path;
  bool higher_is_better;
};

const std::vector<Named>& named_figures() {
  static const std::vector<Named> figures = {
      {"tokens_per_second_per_user", "metrics.tokens_per_second_per_user", true},
      {"tokens_per_second", "metrics.tokens_per_second", true},
      {"ttft", "metrics.time_to_first_token_us.mean", false},
      {"joules_per_token", "metrics.energy.joules_per_token", false},
      {"wafers", "experiment.wafers", false},
  };
  return figures;
}

std::optional<Figure> find_figure(const std::string& name) {
  for (const Named& figure : named_figures())
    if (name == figure.name) return Figure{figure.name, figure.json_path, figure.higher_is_better};
  return std::nullopt;
}

// A path of the result: a declared figure or group, or a path inside a
// declared group (`config.workload.batch` inside `config`).
bool is_result_path(const std::string& path) {
  const std::vector<std::string> declared = reports::metric_paths();
  for (std::string prefix = path;;) {
    if (std::find(declared.begin(), declared.end(), prefix) != declared.end()) return true;
    const size_t dot = prefix.rfind('.');
    if (dot == std::string::npos) return reports::is_decode_metric_path(path);
    prefix.resize(dot);
  }
}

}  // namespace

VaryAxis parse_vary(const std::string& argument) {
  const size_t equals = argument.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == argument.size())
    refuse("--vary", argument, "expects KEY=SPEC: KEY=a,b,c, KEY=range:START:STOP[:STEP] or KEY=log2:START:STOP");
  VaryAxis axis;
  axis.path = argument.substr(0, equals);
  axis.argument = argument;
  sweep::check_override_path(axis.path, {"--vary " + argument, 0, 0});
  const std::string spec = argument.substr(equals + 1);
  const std::vector<std::string> fields = split(spec, ':');
  if (fields[0] == "range")
    axis.values = range_values(fields, argument);
  else if (fields[0] == "log2")
    axis.values = log2_values(fields, argument);
  else
    for (const std::string& value : split(spec, ',')) {
      if (value.empty()) refuse("--vary", argument, "has an empty value (KEY=a,b,c)");
      if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end())
        refuse("--vary", argument, "lists " + config::quoted(value) + " twice");
      // A section's file name is relative to where the command runs; points are written elsewhere.
      const YAML::Node absolute =
          sweep::with_absolute_section_file(axis.path, YAML::Node(value), std::filesystem::current_path().string());
      axis.values.push_back(absolute.IsScalar() ? absolute.Scalar() : value);
    }
  return axis;
}

const std::vector<std::string>& objective_names() {
  static const std::vector<std::string> names = {"tokens_per_second_per_user", "tokens_per_second", "ttft",
                                                 "joules_per_token"};
  return names;
}

Figure objective_figure(const std::string& name) {
  const std::vector<std::string>& names = objective_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    refuse("--objective", name,
           "unknown objective (objectives: " + config::join(names) + ")" + config::did_you_mean(name, names));
  return *find_figure(name);
}

Figure pareto_figure(const std::string& name) {
  std::vector<std::string> names = objective_names();
  names.push_back("wafers");
  if (std::find(names.begin(), names.end(), name) == names.end())
    refuse("--pareto", name,
           "unknown figure (figures: " + config::join(names) + ")" + config::did_you_mean(name, names));
  return *find_figure(name);
}

Constraint parse_constraint(const std::string& argument) {
  Constraint constraint;
  constraint.argument = argument;
  size_t at = argument.find("<=");
  constraint.at_most = at != std::string::npos;
  if (!constraint.at_most) at = argument.find(">=");
  if (at == std::string::npos || at == 0)
    refuse("--constraint", argument,
           "expects KEY<=VALUE or KEY>=VALUE (KEY: a figure such as ttft or wafers, or a "
           "result path such as metrics.per_token_latency_us.p99)");
  const std::string key = argument.substr(0, at);
  const std::string text = argument.substr(at + 2);
  char* end = nullptr;
  constraint.bound = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(constraint.bound))
    refuse("--constraint", argument, "expects a number after the operator, got " + config::quoted(text));
  if (const std::optional<Figure> figure = find_figure(key)) {
    constraint.json_path = figure->json_path;
    return constraint;
  }
  if (!is_result_path(key)) {
    std::vector<std::string> known = reports::metric_paths();
    for (const Named& figure : named_figures()) known.push_back(figure.name);
    refuse("--constraint", argument,
           "unknown figure " + config::quoted(key) + " (a figure name or a result path: wafersim describe metrics)" +
               config::did_you_mean(key, known));
  }
  constraint.json_path = key;
  return constraint;
}

std::optional<double> figure_value(const nlohmann::json& result, const std::string& json_path) {
  const nlohmann::json* node = &result;
  for (const std::string& key : split(json_path, '.')) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
  }
  if (node->is_boolean()) return node->get<bool>() ? 1.0 : 0.0;
  if (!node->is_number()) return std::nullopt;
  return node->get<double>();
}

bool satisfies(const nlohmann::json& result, const Constraint& constraint) {
  const std::optional<double> value = figure_value(result, constraint.json_path);
  if (!value) return false;
  return constraint.at_most ? *value <= constraint.bound : *value >= constraint.bound;
}

bool needs_prefill(const std::string& json_path) {
  for (const char* prefix : {"metrics.time_to_first_token_us", "metrics.prefill", "metrics.end_to_end"})
    if (json_path.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace wafersim::cli::search
