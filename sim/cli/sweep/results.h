#pragma once
// What a sweep keeps of each point: DIR/points/<hash>.json (the record: axis
// values, status, error, wall time and the run's own JSON) and one row of
// DIR/results.csv built from it.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/sweep/points.h"

namespace wafersim::cli::sweep {

// How one point's run ended.
struct PointOutcome {
  std::string status;  // "ok", "does_not_fit" or "failed"
  int exit_code = 0;
  std::string error;  // the run's one-line message; "" when ok
  double wall_seconds = 0;
  nlohmann::json result;  // the run's --json document; null when it wrote none
};

nlohmann::json point_record(const SweepPlan& plan, const Point& point, const std::string& engine,
                            const PointOutcome& outcome);
// The record at `path`, or nullopt when there is none or it does not parse.
std::optional<nlohmann::json> read_point_record(const std::string& path);

// A field as CSV writes it: quoted when it holds a comma, quote, line break or edge space.
std::string csv_field(const std::string& text);
// The value at a dotted path of a JSON document as CSV text; "" when absent or
// null (a figure the backend did not measure, e.g. sim.events of `analytic`).
std::string json_path_text(const nlohmann::json& document, const std::string& path);
// True when the path is there, null included.
bool has_json_path(const nlohmann::json& document, const std::string& path);

std::string csv_header(const SweepPlan& plan, const std::vector<std::string>& metrics);
std::string csv_row(const Point& point, const nlohmann::json& record, const std::vector<std::string>& metrics);
// The row of a point without a record: no figures, no wall time, `status`
// "missing" or "failed", and why in `error` (e.g. the scheduler's end state).
std::string csv_row_without_record(const Point& point, const std::vector<std::string>& metrics,
                                   const std::string& status, const std::string& error);

}  // namespace wafersim::cli::sweep
