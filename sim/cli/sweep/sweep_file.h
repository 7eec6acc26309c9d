#pragma once
// A sweep file: which experiment to start from, which keys to vary over which
// values, which engine runs each point and which results go in the table.
// Reading it checks its own structure; the points themselves are checked
// against the experiment schema when they are built (see points.h).
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "models/config/error.h"

namespace wafersim::cli::sweep {

// One value an override path takes, with the place in the sweep file it came from.
struct Setting {
  std::string path;  // "workload.batch", or a whole section such as "model"
  YAML::Node value;
  config::SourceLocation where;

  Setting(std::string path_, YAML::Node value_, config::SourceLocation where_)
      : path(std::move(path_)), value(std::move(value_)), where(std::move(where_)) {}
  Setting(const Setting&) = default;
  // yaml-cpp's Node assignment writes through to the node it refers to; a
  // Setting is copied by pointing at the other's node (sorting moves Settings).
  Setting& operator=(const Setting& other) {
    path = other.path;
    value.reset(other.value);
    where = other.where;
    return *this;
  }
};

struct Axis {
  std::string path;
  config::SourceLocation where;  // the axis key
  std::vector<Setting> values;   // every value, each with its own position
};

// The column of the seed a repeat sets (in every seed parameter at once).
inline const char* const kRepeatSeedColumn = "repeat.seed";
// The seed parameters a repeat sets.
const std::vector<std::string>& seed_paths();

struct SweepFile {
  std::string path;
  YAML::Node base_source;  // the experiment tree as read, with its positions
  std::string base_file;   // the file those positions refer to
  YAML::Node base;         // the same tree with section file names made absolute
  config::SourceLocation base_where;
  std::string engine = "analytic";  // sim | analytic | map | serve
  std::string mode = "grid";        // grid | zip
  std::vector<Axis> axes;
  std::vector<std::vector<Setting>> points;  // explicit points, after the axis points
  std::vector<std::string> metrics;          // JSON paths of the result columns; empty = the engine's defaults
  std::vector<Setting> seeds;                // repeat.seeds, each value for every seed path
  std::vector<std::string> recorded_hashes;  // point_hashes: as written into DIR/sweep.yaml
};

const std::vector<std::string>& engine_names();
// ConfigError at `where` unless `path` names a parameter or a section of the
// experiment (what a sweep axis or a search's --vary may set).
void check_override_path(const std::string& path, const config::SourceLocation& where);
// The result columns shown when a sweep names none.
std::vector<std::string> default_metrics(const std::string& engine);

// Reads and checks a sweep file; every error is a one-line ConfigError naming
// file:line:col and key (exit code 2).
SweepFile load_sweep_file(const std::string& path);

}  // namespace wafersim::cli::sweep
