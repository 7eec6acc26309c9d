#include "sim/cli/sweep/sweep_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "models/config/source_text.h"
#include "models/config/text.h"
#include "sim/cli/sweep/yaml_tree.h"
#include "sim/experiment/experiment.h"
#include "sim/reports/metric_table.h"
#include "sim/reports/serving_metric_table.h"

namespace wafersim::cli::sweep {

using reports::is_decode_metric_path;
using reports::kSweepDefault;
using reports::metric_paths;
using reports::serving_sweep_defaults;

namespace {

// Bounds that keep a typo (a step of 0.0001) from filling the disk with points.
constexpr size_t kMaxValuesPerAxis = 10000;

const std::vector<std::string> kTopKeys = {"base",   "engine",  "mode",   "axes",
                                           "points", "metrics", "repeat", "point_hashes"};

class Reader {
 public:
  explicit Reader(std::string file)
      : file_(std::move(file)), folder_(std::filesystem::path(file_).parent_path().string()) {}

  const std::string& folder() const { return folder_; }

  config::SourceLocation at(const YAML::Node& node) const { return config::location_of(file_, node.Mark()); }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
    throw config::ConfigError(at(node), key, message);
  }

  std::string key_of(const YAML::Node& key, const std::string& within) const {
    if (!key.IsScalar())
      fail(key, within, "keys must be plain names, got a " + std::string(key.IsMap() ? "mapping" : "list"));
    return key.Scalar();
  }

  void only_keys(const YAML::Node& map, const std::string& within, const std::vector<std::string>& allowed) const {
    for (const auto& pair : map) {
      const std::string key = key_of(pair.first, within);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(pair.first, within.empty() ? key : within + "." + key,
             "unknown key " + config::quoted(key) + (within.empty() ? " in the sweep file" : " in " + within) +
                 " (keys: " + config::join(allowed) + ")" + config::did_you_mean(key, allowed));
    }
  }

  std::string word(const YAML::Node& node, const std::string& key, const std::vector<std::string>& choices) const {
    if (!node.IsScalar() || std::find(choices.begin(), choices.end(), node.Scalar()) == choices.end())
      fail(node, key,
           key + " expects one of: " + config::join(choices) + ", got " +
               (node.IsScalar() ? config::quoted(node.Scalar()) + config::did_you_mean(node.Scalar(), choices)
                                : std::string("a ") + (node.IsMap() ? "mapping" : "list")));
    return node.Scalar();
  }

  // A number of a range: integers stay integers, so generated values read as integers.
  struct Number {
    double value = 0;
    bool integer = false;
  };
  Number number(const YAML::Node& parent, const std::string& name, const std::string& within) const {
    const std::string key = within + "." + name;
    if (!parent[name]) fail(parent, key, key + " is missing; expected a number");
    const YAML::Node node = parent[name];
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    const bool plain = node.IsScalar() && node.Tag() != "!";
    char* end = nullptr;
    const double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (!plain || text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) ||
        text.find_first_not_of("0123456789+-.eE") != std::string::npos)
      fail(node, key, key + " expects a number, got " + (node.IsScalar() ? config::quoted(text) : "a group"));
    const bool integer = text.find_first_of(".eE") == std::string::npos && std::fabs(value) < 9e15;
    return {value, integer};
  }

  // A list of values, {range: {start, stop, step}} or {log2: {start, stop}}.
  std::vector<Setting> values(const std::string& path, const YAML::Node& node, const std::string& key) const {
    std::vector<Setting> out;
    if (node.IsSequence()) {
      if (node.size() == 0) fail(node, key, key + " has no values");
      // A file named by a section's value is relative to this file; points are written elsewhere.
      for (const YAML::Node& value : node)
        out.push_back({path, with_absolute_section_file(path, value, folder_), at(value)});
      return out;
    }
    std::string got = node.IsScalar() ? config::quoted(node.Scalar()) + " (write [value] for a single value)"
                      : node.IsMap()  ? "a mapping"
                                      : "nothing";
    if (node.IsMap() && node.size() == 1) {
      const auto entry = *node.begin();
      const std::string form = key_of(entry.first, key);
      if (form == "range") return range(path, entry.second, key + ".range");
      if (form == "log2") return log2(path, entry.second, key + ".log2");
      got = "a mapping with " + config::quoted(form) + config::did_you_mean(form, {"range", "log2"});
    }
    fail(node, key,
         key + " expects a list of values, {range: {start, stop, step}} or {log2: {start, stop}}, got " + got);
  }

  std::vector<Setting> range(const std::string& path, const YAML::Node& spec, const std::string& key) const {
    if (!spec.IsMap()) fail(spec, key, key + " expects {start, stop, step}");
    only_keys(spec, key, {"start", "stop", "step"});
    const Number start = number(spec, "start", key);
    const Number stop = number(spec, "stop", key);
    const Number step = spec["step"] ? number(spec, "step", key) : Number{1, true};
    const YAML::Node step_node = spec["step"] ? spec["step"] : spec;
    if (step.value == 0 || (stop.value - start.value) * step.value < 0)
      fail(step_node, key,
           fmt::format("{} never reaches stop {} from start {} with step {}", key, config::format_number(stop.value),
                       config::format_number(start.value), config::format_number(step.value)));
    const double count = std::floor((stop.value - start.value) / step.value + 1e-9) + 1;
    if (count > double(kMaxValuesPerAxis))
      fail(spec, key,
           fmt::format("{} gives {:.0f} values, more than the {} an axis may have", key, count, kMaxValuesPerAxis));
    const bool integers = start.integer && stop.integer && step.integer;
    std::vector<Setting> out;
    for (size_t i = 0; i < size_t(count); ++i) {
      const double value = start.value + double(i) * step.value;
      // Rounded to 12 digits so 0.1 steps read 0.3, not 0.30000000000000004.
      const std::string text = integers
                                   ? fmt::format("{:.0f}", value)
                                   : config::format_number(std::strtod(fmt::format("{:.12g}", value).c_str(), nullptr));
      out.push_back({path, YAML::Node(text), at(spec)});
    }
    return out;
  }

  std::vector<Setting> log2(const std::string& path, const YAML::Node& spec, const std::string& key) const {
    if (!spec.IsMap()) fail(spec, key, key + " expects {start, stop}");
    only_keys(spec, key, {"start", "stop"});
    const Number start = number(spec, "start", key);
    const Number stop = number(spec, "stop", key);
    auto power_of_two = [](const Number& n) {
      return n.integer && n.value >= 1 && n.value < 9e15 && (uint64_t(n.value) & (uint64_t(n.value) - 1)) == 0;
    };
    if (!power_of_two(start)) fail(spec["start"], key, key + ".start expects a power of two (1, 2, 4, ...)");
    if (!power_of_two(stop) || stop.value < start.value)
      fail(spec["stop"], key, key + ".stop expects a power of two no smaller than start");
    std::vector<Setting> out;
    for (uint64_t value = uint64_t(start.value); value <= uint64_t(stop.value); value *= 2)
      out.push_back({path, YAML::Node(std::to_string(value)), at(spec)});
    return out;
  }

  void check_path(const std::string& path, const YAML::Node& key_node) const {
    check_override_path(path, at(key_node));
  }

 private:
  std::string file_;
  std::string folder_;
};

std::string folder_of(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

void read_base(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  sweep.base_where = in.at(node);
  if (node.IsScalar()) {
    const std::filesystem::path given = node.Scalar();
    const std::string path = given.is_absolute()
                                 ? given.string()
                                 : (std::filesystem::path(folder_of(sweep.path)) / given).lexically_normal().string();
    std::string text;
    try {
      text = config::read_config_file(path);
    } catch (const config::ConfigError& e) {
      in.fail(node, "base", std::string("base experiment ") + e.what());
    }
    sweep.base_source = config::parse_config_text(text, path);
    sweep.base_file = path;
    if (!sweep.base_source.IsMap())
      throw config::ConfigError(config::SourceLocation{path, 1, 0}, "",
                                "an experiment file holds a mapping of sections");
  } else if (node.IsMap()) {
    sweep.base_source = node;
    sweep.base_file = sweep.path;
  } else {
    in.fail(node, "base", "base expects an experiment file name or an experiment mapping (hardware:, model:, ...)");
  }
  sweep.base = with_absolute_section_files(sweep.base_source, folder_of(sweep.base_file));
}

void read_axes(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  if (node.IsNull()) return;
  if (!node.IsMap()) in.fail(node, "axes", "axes expects a mapping of override paths to values");
  for (const auto& pair : node) {
    const std::string path = in.key_of(pair.first, "axes");
    in.check_path(path, pair.first);
    sweep.axes.push_back({path, in.at(pair.first), in.values(path, pair.second, "axes." + path)});
  }
}

void read_points(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  if (node.IsNull()) return;
  if (!node.IsSequence()) in.fail(node, "points", "points expects a list of mappings of override paths to values");
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& point = node[i];
    const std::string key = "points[" + std::to_string(i) + "]";
    if (!point.IsMap() && !point.IsNull()) in.fail(point, key, key + " expects a mapping of override paths to values");
    std::vector<Setting> settings;
    if (point.IsMap())
      for (const auto& pair : point) {
        const std::string path = in.key_of(pair.first, key);
        in.check_path(path, pair.first);
        settings.push_back({path, with_absolute_section_file(path, pair.second, in.folder()),
                            in.at(pair.second.IsNull() ? pair.first : pair.second)});
      }
    sweep.points.push_back(std::move(settings));
  }
}

bool is_json_path(const std::string& path) {
  if (path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

void read_metrics(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  if (!node.IsSequence() || node.size() == 0)
    in.fail(node, "metrics", "metrics expects a list of result paths such as metrics.tokens_per_second");
  for (const YAML::Node& metric : node) {
    if (!metric.IsScalar() || !is_json_path(metric.Scalar()))
      in.fail(metric, "metrics",
              "metrics expects dotted result paths such as metrics.per_token_latency_us.p99, got " +
                  (metric.IsScalar() ? config::quoted(metric.Scalar()) : std::string("a group")));
    if ((sweep.engine == "sim" || sweep.engine == "analytic") && !is_decode_metric_path(metric.Scalar()))
      in.fail(metric, "metrics",
              "unknown metric " + config::quoted(metric.Scalar()) + " (wafersim describe metrics lists them)" +
                  config::did_you_mean(metric.Scalar(), metric_paths()));
    if (std::find(sweep.metrics.begin(), sweep.metrics.end(), metric.Scalar()) != sweep.metrics.end())
      in.fail(metric, "metrics", "metric " + config::quoted(metric.Scalar()) + " is listed twice");
    sweep.metrics.push_back(metric.Scalar());
  }
}

void read_repeat(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  if (!node.IsMap()) in.fail(node, "repeat", "repeat expects a mapping with seeds: [...]");
  in.only_keys(node, "repeat", {"seeds"});
  if (!node["seeds"])
    in.fail(node, "repeat.seeds", "repeat needs seeds: a list of seeds, one run of each point per seed");
  // The value's path is a placeholder: points.cpp writes each seed into every seed parameter.
  sweep.seeds = in.values(kRepeatSeedColumn, node["seeds"], "repeat.seeds");
  auto refuse_seed = [](const std::string& path, const config::SourceLocation& where, const std::string& what) {
    for (const std::string& seed : seed_paths())
      if (path == seed || seed.rfind(path + ".", 0) == 0)
        throw config::ConfigError(
            where, path,
            what + " " + config::quoted(path) + " sets " + seed + ", which repeat.seeds sets too; keep one of the two");
  };
  for (const Axis& axis : sweep.axes) refuse_seed(axis.path, axis.where, "axis");
  for (const std::vector<Setting>& point : sweep.points)
    for (const Setting& setting : point) refuse_seed(setting.path, setting.where, "point");
}

void read_hashes(const Reader& in, const YAML::Node& node, SweepFile& sweep) {
  if (!node.IsSequence()) in.fail(node, "point_hashes", "point_hashes expects a list of configuration hashes");
  for (const YAML::Node& hash : node) {
    if (!hash.IsScalar() || hash.Scalar().size() != 16 ||
        hash.Scalar().find_first_not_of("0123456789abcdef") != std::string::npos)
      in.fail(hash, "point_hashes", "point_hashes expects 16-digit hexadecimal hashes");
    sweep.recorded_hashes.push_back(hash.Scalar());
  }
}

}  // namespace

void check_override_path(const std::string& path, const config::SourceLocation& where) {
  const config::Schema& schema = experiment_schema();
  if (schema.find(path) || schema.is_section(path)) return;
  std::vector<std::string> known;
  std::set<std::string> sections;
  for (const config::ParamSpec& param : schema.params()) {
    known.push_back(param.path);
    for (size_t dot = param.path.find('.'); dot != std::string::npos; dot = param.path.find('.', dot + 1))
      sections.insert(param.path.substr(0, dot));
  }
  known.insert(known.end(), sections.begin(), sections.end());
  throw config::ConfigError(where, path,
                            "unknown override path " + config::quoted(path) +
                                ": expected a parameter or a section of the experiment (see wafersim describe params)" +
                                config::did_you_mean(path, known));
}

const std::vector<std::string>& seed_paths() {
  static const std::vector<std::string> paths = {"workload.seed"};
  return paths;
}

const std::vector<std::string>& engine_names() {
  static const std::vector<std::string> names = {"sim", "analytic", "map", "serve"};
  return names;
}

std::vector<std::string> default_metrics(const std::string& engine) {
  if (engine == "map") return {"fits", "max_context_tokens", "tiles_used", "sram_peak_bytes", "colors_peak"};
  if (engine == "serve") return serving_sweep_defaults();
  return metric_paths(kSweepDefault);
}

SweepFile load_sweep_file(const std::string& path) {
  SweepFile sweep;
  sweep.path = path;
  const Reader in(path);
  const YAML::Node root = config::parse_config_text(config::read_config_file(path), path);
  if (!root.IsMap())
    throw config::ConfigError(
        root.IsNull() ? config::SourceLocation{path, 1, 0} : in.at(root), "",
        "a sweep file holds a mapping with base:, axes: and the other keys (" + config::join(kTopKeys) + ")");
  in.only_keys(root, "", kTopKeys);
  if (!root["base"]) throw config::ConfigError({path, 1, 0}, "base", "the sweep has no base: experiment to start from");
  read_base(in, root["base"], sweep);
  if (root["engine"]) sweep.engine = in.word(root["engine"], "engine", engine_names());
  if (root["mode"]) sweep.mode = in.word(root["mode"], "mode", {"grid", "zip"});
  if (root["axes"]) read_axes(in, root["axes"], sweep);
  if (root["points"]) read_points(in, root["points"], sweep);
  if (root["metrics"]) read_metrics(in, root["metrics"], sweep);
  if (root["repeat"]) read_repeat(in, root["repeat"], sweep);
  if (root["point_hashes"]) read_hashes(in, root["point_hashes"], sweep);

  if (sweep.axes.empty() && sweep.points.empty())
    throw config::ConfigError({path, 1, 0}, "axes", "the sweep has no points: give axes: or points:");
  if (sweep.mode == "zip")
    for (const Axis& axis : sweep.axes)
      if (axis.values.size() != sweep.axes.front().values.size())
        throw config::ConfigError(
            axis.where, axis.path,
            fmt::format("mode zip pairs the i-th values of every axis, so every axis needs "
                        "the same number of values: {} has {}, {} has {}",
                        sweep.axes.front().path, sweep.axes.front().values.size(), axis.path, axis.values.size()));
  return sweep;
}

}  // namespace wafersim::cli::sweep
