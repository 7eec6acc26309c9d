#pragma once
// Every field of a decode result, declared once: its JSON path, unit,
// meaning, how the table prints it, and whether golden files and sweeps use
// it. The JSON writer, the table printer, the sweep's default and accepted
// columns, `wafersim describe metrics`, the golden-file script and the test
// that holds docs/METRICS.md all read this table; no metric is spelled twice.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"

namespace wafersim::reports {

// What a metric is read from: one finished `run` or `analytic`.
struct DecodeResult {
  const Experiment& experiment;
  const mapping::Plan& plan;
  const DecodeMetrics& metrics;
  const backend::RunFigures& figures;
};

// How the table on stdout shows a metric: its value times `scale`, with
// `decimals` digits, in `unit` (which may differ from the JSON's, e.g. % for a fraction).
struct TableRow {
  std::string label;
  std::string unit;
  double scale = 1;
  int decimals = 0;
};

enum MetricFlag : unsigned {
  kGolden = 1u << 0,            // recorded in tests/data/golden/*.json (exact cycles)
  kSweepDefault = 1u << 1,      // a sweep's column when its file lists no metrics:
  kMeasuredOnly = 1u << 2,      // measured by the engine only: JSON null and "—" in the table when the backend
                                // did not measure it (RunFigures::measured false), never a made-up zero
  kMachineDependent = 1u << 3,  // wall time and memory: the only figures two identical runs may differ in
  kSetup = 1u << 4,             // describes what was run (model, batch, ...), not a measured figure
  kSpeculative = 1u << 5,       // speculative decoding only: no table row and no JSON key without it
  kMoe = 1u << 6,               // models with MoE layers only: no table row and no JSON key without them
  kDefects = 1u << 7            // wafers with defects only (hardware.defects): no table row and no JSON key without
};

struct Metric {
  std::string path;  // dotted JSON path, e.g. "metrics.per_token_latency_us.p99"
  std::string unit;  // of the JSON value: "cycles", "us", "tokens/s", "fraction", "bytes", ...
  std::string description;
  unsigned flags = 0;
  std::optional<TableRow> row;  // none: JSON only
  std::function<nlohmann::json(const DecodeResult&)> read;
};

// In table order.
const std::vector<Metric>& decode_metric_table();

// The paths of the metrics carrying `flag` (every metric for 0), in table order.
std::vector<std::string> metric_paths(unsigned flag = 0);

// True when `path` names a declared metric or a group of them ("metrics.breakdown").
bool is_decode_metric_path(const std::string& path);

// Every metric at its path in `document` (nested objects are created); a
// kMeasuredOnly metric the backend did not measure is null.
void write_metrics(const DecodeResult& result, nlohmann::json& document);

// The JSON pointer of a dotted path ("metrics.breakdown.compute").
nlohmann::json::json_pointer pointer(const std::string& path);
// How the table shows `value` in `row`: its digits, or "—" for null.
std::string table_cell(const TableRow& row, const nlohmann::json& value);

// The rows of the metrics that have one, for the result table; "—" for a figure not measured.
std::vector<std::vector<std::string>> metric_rows(const DecodeResult& result);

}  // namespace wafersim::reports
