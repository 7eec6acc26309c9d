#include "sim/cli/sweep/points.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

#include "models/config/text.h"
#include "models/config/value_text.h"
#include "sim/cli/sweep/yaml_tree.h"
#include "sim/experiment/experiment.h"
#include "sim/reports/command_error.h"
#include "sim/reports/config_json.h"

namespace wafersim::cli::sweep {

using reports::CommandError;
using reports::kExitBadInput;
using reports::value_json;

namespace {

// The combinations of axis values, first axis varying slowest (grid) or
// the i-th value of every axis together (zip); then the explicit points.
std::vector<std::vector<Setting>> combinations(const SweepFile& sweep) {
  std::vector<std::vector<Setting>> out;
  if (!sweep.axes.empty()) {
    size_t count = sweep.mode == "zip" ? sweep.axes.front().values.size() : 1;
    if (sweep.mode == "grid")
      for (const Axis& axis : sweep.axes) {
        count *= axis.values.size();
        if (count > kMaxPoints)
          throw config::ConfigError(axis.where, axis.path,
                                    fmt::format("the grid has more than {} points at axis {}", kMaxPoints, axis.path));
      }
    for (size_t n = 0; n < count; ++n) {
      std::vector<Setting> settings;
      size_t rest = n;
      for (size_t a = sweep.axes.size(); a-- > 0;) {
        const std::vector<Setting>& values = sweep.axes[a].values;
        settings.push_back(values[sweep.mode == "zip" ? n : rest % values.size()]);
        if (sweep.mode == "grid") rest /= values.size();
      }
      std::reverse(settings.begin(), settings.end());
      out.push_back(std::move(settings));
    }
  }
  out.insert(out.end(), sweep.points.begin(), sweep.points.end());
  if (sweep.seeds.empty()) return out;
  std::vector<std::vector<Setting>> repeated;
  for (const std::vector<Setting>& settings : out)
    for (const Setting& seed : sweep.seeds) {
      repeated.push_back(settings);
      repeated.back().push_back(seed);
    }
  if (repeated.size() > kMaxPoints)
    throw config::ConfigError(sweep.seeds.front().where, "repeat.seeds",
                              fmt::format("the sweep has more than {} points with its repeats", kMaxPoints));
  return repeated;
}

std::vector<std::string> columns_of(const SweepFile& sweep) {
  std::vector<std::string> columns;
  for (const Axis& axis : sweep.axes) columns.push_back(axis.path);
  for (const std::vector<Setting>& point : sweep.points)
    for (const Setting& setting : point)
      if (std::find(columns.begin(), columns.end(), setting.path) == columns.end()) columns.push_back(setting.path);
  if (!sweep.seeds.empty()) columns.push_back(kRepeatSeedColumn);
  return columns;
}

size_t depth(const std::string& path) { return size_t(std::count(path.begin(), path.end(), '.')); }

// The settings as they are applied: a repeat's seed goes into every seed
// parameter, and whole sections go before keys inside them.
std::vector<Setting> applied(const std::vector<Setting>& settings) {
  std::vector<Setting> out;
  for (const Setting& setting : settings) {
    if (setting.path != kRepeatSeedColumn) {
      out.push_back(setting);
      continue;
    }
    for (const std::string& path : seed_paths()) out.push_back({path, setting.value, setting.where});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Setting& a, const Setting& b) { return depth(a.path) < depth(b.path); });
  return out;
}

std::string describe(const std::vector<Setting>& settings) {
  std::vector<std::string> parts;
  for (const Setting& setting : settings) parts.push_back(setting.path + "=" + flow_text(setting.value));
  return parts.empty() ? "the base experiment" : config::join(parts);
}

// A scratch file the points are loaded from: the loader reads files only.
// It goes where TMPDIR says, as mkstemp's other users do; a TMPDIR that is
// missing or read-only is the user's to fix, so it is named as bad input.
class ScratchFile {
 public:
  ScratchFile() {
    const char* tmpdir = std::getenv("TMPDIR");
    folder_ = tmpdir && *tmpdir ? tmpdir : "/tmp";
    origin_ = tmpdir && *tmpdir ? "TMPDIR" : "the default; TMPDIR is unset";
    path_ = (std::filesystem::path(folder_) / "wafersim-sweep-XXXXXX.yaml").string();
    const int fd = ::mkstemps(path_.data(), 5);
    if (fd < 0) refuse(std::strerror(errno));
    ::close(fd);
  }
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  void write(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) refuse("writing " + path_ + " failed");
  }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void refuse(const std::string& reason) const {
    throw CommandError(kExitBadInput, fmt::format("cannot create a temporary file in {} ({}): {}; point TMPDIR at a "
                                                  "writable folder",
                                                  folder_, origin_, reason));
  }

  std::string folder_;
  std::string origin_;  // where folder_ comes from, for the message
  std::string path_;
};

// An error in a point's experiment, moved to where the sweep file gave the
// value at fault: the setting of that key, or else the base experiment.
[[noreturn]] void report(const config::ConfigError& error, const SweepFile& sweep, const std::vector<Setting>& settings,
                         const std::string& scratch, size_t index) {
  const std::string context = fmt::format(" (point {}: {})", index + 1, describe(settings));
  std::string message = error.what();
  const std::string prefix = error.where().str() + ": ";
  if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
  const std::string& key = error.key();
  // An error inside a file the point names (a model file) is already at its place.
  if (error.where().file != scratch) throw config::ConfigError(error.where(), key, message + context);
  const std::vector<Setting> in_order = applied(settings);
  const Setting* blamed = nullptr;
  for (const Setting& setting : in_order) {
    const bool related = !key.empty() && (key == setting.path || key.rfind(setting.path + ".", 0) == 0 ||
                                          setting.path.rfind(key + ".", 0) == 0);
    if (related) blamed = &setting;  // the last one applied wins, as in the loader
  }
  if (blamed) throw config::ConfigError(blamed->where, key, message + context);
  // The loader names a value at the value, and a key it does not know at the key.
  const bool known = experiment_schema().find(key) || experiment_schema().is_section(key);
  throw config::ConfigError(locate(sweep.base_source, key, sweep.base_file, sweep.base_where, !known), key,
                            message + context);
}

std::string cell(const config::Config& config, const std::vector<Setting>& settings, const std::string& column) {
  for (const Setting& setting : settings)
    if (setting.path == column) return flow_text(setting.value);
  if (config.schema().find(column)) return config::value_text(config.entries().at(column).value);
  return config.preset(column);  // a section: its preset name, if it has one
}

}  // namespace

SweepPlan plan_points(const SweepFile& sweep) {
  SweepPlan plan;
  plan.columns = columns_of(sweep);
  ScratchFile scratch;
  std::set<std::string> seen;
  const std::vector<std::vector<Setting>> all = combinations(sweep);
  for (size_t index = 0; index < all.size(); ++index) {
    Point point;
    YAML::Node tree = YAML::Clone(sweep.base);
    for (const Setting& setting : applied(all[index])) set_value(tree, setting.path, setting.value);
    point.yaml = "# Sweep point: " + describe(all[index]) + "\n" + emit_yaml(tree);
    scratch.write(point.yaml);

    std::optional<config::Config> config;
    try {
      config = load_experiment(scratch.path(), {}).config;
    } catch (const config::ConfigError& error) {
      report(error, sweep, all[index], scratch.path(), index);
    } catch (const mapping::DoesNotFitError&) {
      // Valid, only too large: the run records it.
    }
    if (!config) config = load_experiment_config(scratch.path(), {});
    point.hash = config->hash();
    if (!seen.insert(point.hash).second) {
      ++plan.duplicates;
      continue;
    }
    for (const std::string& column : plan.columns) {
      point.cells.push_back(cell(*config, all[index], column));
      point.values.push_back(config->schema().find(column) ? value_json(config->entries().at(column).value)
                                                           : nlohmann::json(point.cells.back()));
    }
    plan.points.push_back(std::move(point));
  }
  return plan;
}

}  // namespace wafersim::cli::sweep
