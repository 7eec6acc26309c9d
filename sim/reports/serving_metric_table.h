#pragma once
// Every figure of a serve result, declared once: its JSON path, unit, meaning
// and how the table prints it. serve's JSON document and table, `describe
// metrics`, the sweep's default columns for serve and the test that holds
// docs/SERVING.md all read these two tables, as metric_table.h is for decode.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/reports/metric_table.h"
#include "sim/reports/serve_report.h"

namespace wafersim::reports {

// What a run figure is read from: one finished serve.
struct ServeResult {
  const Experiment& experiment;
  const ServeOutcome& outcome;
};

// A figure of every request class: at serving.<path> for all requests and at
// serving.classes.<class>.<path> for each class; the table has a column each.
struct ClassFigure {
  std::string path;  // below "serving." and "serving.classes.<class>."
  std::string unit;
  std::string description;
  unsigned flags = 0;           // kSweepDefault (at serving.<path>)
  std::optional<TableRow> row;  // TableRow::scale is 1; none: JSON only
  // null: nothing to summarise (a distribution without samples): JSON null, "—" in the table
  std::function<nlohmann::json(const serving::ClassMetrics&)> read;
};

// A figure of the whole run, at its path from the document's root.
struct RunFigure {
  std::string path;
  std::string unit;
  std::string description;
  unsigned flags = 0;  // kSetup; kSpeculative: no key without speculative decoding
  std::function<nlohmann::json(const ServeResult&)> read;
};

// In table order.
const std::vector<ClassFigure>& serving_class_table();
const std::vector<RunFigure>& serving_run_table();

// The paths a sweep of serve points tabulates when its file lists none.
std::vector<std::string> serving_sweep_defaults();

// Every figure at its path in `document` (nested objects are created).
void write_serving_figures(const ServeResult& result, nlohmann::json& document);

// The table's rows: a label, one cell per column of `columns`, the unit.
std::vector<std::vector<std::string>> serving_rows(const std::vector<const serving::ClassMetrics*>& columns);

}  // namespace wafersim::reports
