#pragma once
// The points of a sweep: every combination of axis values (grid or zip), then
// the explicit points, each repeated per seed; each one written out as a
// complete experiment and loaded as `run` would load it, so a bad path or
// value stops the sweep, naming its line in the sweep file, before anything runs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/sweep/sweep_file.h"

namespace wafersim::cli::sweep {

struct Point {
  std::vector<std::string> cells;      // the value of each column this point runs with, as the CSV shows it
  std::vector<nlohmann::json> values;  // the same with its type: a parameter's resolved value (4, not "4")
  std::string yaml;                    // the complete experiment file
  std::string hash;                    // hash of the resolved configuration: the point's identity
};

struct SweepPlan {
  std::vector<std::string> columns;  // axis paths, then paths only explicit points set, then repeat.seed
  std::vector<Point> points;         // in sweep order, one per distinct experiment
  size_t duplicates = 0;             // points that resolved to an experiment listed before them
};

// Largest number of points a sweep may expand to.
constexpr size_t kMaxPoints = 100000;

// Expands and validates every point (ConfigError, exit code 2, at the sweep
// file's line of the value at fault). A point that is valid but too large for
// the hardware stays in: running it records that it does not fit.
SweepPlan plan_points(const SweepFile& sweep);

}  // namespace wafersim::cli::sweep
