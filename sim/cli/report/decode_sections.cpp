// The sections of run and analytic results: every figure is read from the JSON
// at the path metric_table.cpp declares it at, and shown as the terminal table shows it.
#include <fmt/format.h>

#include "sim/cli/report/report_sections.h"
#include "sim/cli/report/svg_charts.h"
#include "sim/reports/command_error.h"
#include "sim/reports/metric_table.h"

namespace wafersim::cli {

namespace {

using reports::decode_metric_table;
using reports::Metric;

// The table's cell for one result: blank where the result has no such figure
// (no prefill, no speculation), "—" where the backend did not measure it.
std::string metric_cell(const ReportInput& input, const Metric& metric) {
  const nlohmann::json* value = find_path(input.document, metric.path);
  if (!value) return "";
  if (!value->is_null()) number_at(input, metric.path);  // refuses a value that is not a number
  return reports::table_cell(*metric.row, *value);
}

std::string metrics_table(const std::vector<const ReportInput*>& results) {
  std::vector<std::string> headers = {"metric"};
  for (size_t r = 0; r < results.size(); ++r) headers.push_back(fmt::format("[{}]", r + 1));
  headers.push_back("unit");
  std::vector<std::vector<std::string>> rows;
  for (const Metric& metric : decode_metric_table()) {
    if (!metric.row) continue;
    std::vector<std::string> row = {metric.row->label};
    bool any = false;
    for (const ReportInput* input : results) {
      row.push_back(metric_cell(*input, metric));
      any = any || !row.back().empty();
    }
    row.push_back(metric.row->unit);
    if (any) rows.push_back(row);
  }
  std::vector<bool> numeric(headers.size(), true);
  numeric.front() = numeric.back() = false;
  std::string legend = "<ul>";
  for (size_t r = 0; r < results.size(); ++r)
    legend += fmt::format("<li>[{}] {}</li>", r + 1, escape_html(result_label(*results[r])));
  return legend + "</ul>\n" + html_table(headers, rows, numeric);
}

// The shares under `group` ("metrics.breakdown") in the order the metric table declares them.
StackedRow shares(const ReportInput& input, const std::string& group, const std::string& label) {
  StackedRow row{label, {}};
  double total = 0;
  for (const Metric& metric : decode_metric_table()) {
    if (metric.path.rfind(group + ".", 0) != 0 || !find_path(input.document, metric.path)) continue;
    const double value = number_at(input, metric.path);
    row.shares.push_back({metric.path.substr(group.size() + 1), value});
    total += value;
  }
  // Energy is in joules: its shares are of the total.
  for (Share& share : row.shares) share.fraction = total > 0 ? share.fraction / total : 0;
  return row;
}

std::string critical_path(const std::vector<const ReportInput*>& results) {
  std::vector<StackedRow> rows;
  for (size_t r = 0; r < results.size(); ++r) {
    rows.push_back(shares(*results[r], "metrics.breakdown", fmt::format("[{}] decode", r + 1)));
    if (find_path(results[r]->document, "metrics.prefill.breakdown"))
      rows.push_back(shares(*results[r], "metrics.prefill.breakdown", fmt::format("[{}] prefill", r + 1)));
  }
  return "<p class=\"note\">Where the cycles of the last token's critical path go (docs/METRICS.md); "
         "contention is measured by the engine only.</p>\n" +
         svg_stacked(rows);
}

std::string energy(const std::vector<const ReportInput*>& results) {
  std::vector<StackedRow> rows;
  for (size_t r = 0; r < results.size(); ++r) {
    if (!find_path(results[r]->document, "metrics.energy.breakdown")) continue;
    rows.push_back(shares(*results[r], "metrics.energy.breakdown", fmt::format("[{}] decode", r + 1)));
    if (find_path(results[r]->document, "metrics.prefill.energy.breakdown"))
      rows.push_back(shares(*results[r], "metrics.prefill.energy.breakdown", fmt::format("[{}] prefill", r + 1)));
  }
  if (rows.empty()) return "";
  return "<p class=\"note\">Joules by where they go (docs/ENERGY.md).</p>\n" + svg_stacked(rows);
}

// Bars of an array of {region, `figure`} objects at `path`.
std::vector<Bar> region_bars(const ReportInput& input, const std::string& path, const std::string& figure) {
  std::vector<Bar> bars;
  const nlohmann::json* list = find_path(input.document, path);
  for (size_t i = 0; list && list->is_array() && i < list->size(); ++i) {
    const nlohmann::json* region = find_path(input.document, fmt::format("{}.{}.region", path, i));
    bars.push_back({region && region->is_string() ? region->get<std::string>() : std::to_string(i),
                    number_at(input, fmt::format("{}.{}.{}", path, i, figure))});
  }
  return bars;
}

std::string per_layer(const std::vector<const ReportInput*>& results) {
  std::string body;
  for (size_t r = 0; r < results.size(); ++r) {
    const std::string label = fmt::format("[{}] {}", r + 1, result_label(*results[r]));
    body += "<h3>" + escape_html(label) + ": decode, per token</h3>\n" +
            svg_columns(region_bars(*results[r], "metrics.per_layer", "cycles_per_token"), "cycles per token", 0);
    if (find_path(results[r]->document, "metrics.prefill.per_layer"))
      body +=
          "<h3>" + escape_html(label) + ": prefill, per chunk</h3>\n" +
          svg_columns(region_bars(*results[r], "metrics.prefill.per_layer", "cycles_per_chunk"), "cycles per chunk", 0);
  }
  return "<p class=\"note\">Each region's mean time from taking an iteration to sending it on.</p>\n" + body;
}

// metrics.prefill.steps_per_region: the steps of the prefill region that
// takes a chunk longest, the one that paces the prefill's pipeline.
std::string prefill_steps(const ReportInput& input, const std::string& label) {
  const nlohmann::json* layers = find_path(input.document, "metrics.prefill.per_layer");
  const nlohmann::json* steps = find_path(input.document, "metrics.prefill.steps_per_region");
  if (!layers || !layers->is_array() || !steps || !steps->is_array()) return "";
  std::string slowest;
  double longest = -1;
  for (size_t i = 0; i < layers->size(); ++i) {
    const nlohmann::json* region = find_path(input.document, fmt::format("metrics.prefill.per_layer.{}.region", i));
    const double cycles = number_at(input, fmt::format("metrics.prefill.per_layer.{}.cycles_per_chunk", i));
    if (region && region->is_string() && cycles > longest) {
      slowest = region->get<std::string>();
      longest = cycles;
    }
  }
  std::vector<Bar> bars;
  for (size_t i = 0; i < steps->size(); ++i) {
    const std::string path = fmt::format("metrics.prefill.steps_per_region.{}", i);
    const nlohmann::json* region = find_path(input.document, path + ".region");
    const nlohmann::json* step = find_path(input.document, path + ".step");
    if (region && region->is_string() && region->get<std::string>() == slowest && step && step->is_string())
      bars.push_back({step->get<std::string>(), number_at(input, path + ".cycles")});
  }
  if (bars.empty()) return "";
  return "<h3>" + escape_html(label + ": prefill, " + slowest + " (the slowest region), first chunk") + "</h3>\n" +
         svg_hbars(bars, "cycles", 0);
}

// metrics.steps: each kind of region's steps for the first token (analytic
// only); then the prefill's slowest region's steps, from either backend.
std::string per_step(const std::vector<const ReportInput*>& results) {
  std::string body;
  for (size_t r = 0; r < results.size(); ++r) {
    const std::string label = fmt::format("[{}] {}", r + 1, result_label(*results[r]));
    const nlohmann::json* steps = find_path(results[r]->document, "metrics.steps");
    if (steps && steps->is_object())
      for (const auto& [region, list] : steps->items()) {
        std::vector<Bar> bars;
        const std::string path = "metrics.steps." + region;
        for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
          const nlohmann::json* step = find_path(results[r]->document, fmt::format("{}.{}.step", path, i));
          bars.push_back({step && step->is_string() ? step->get<std::string>() : std::to_string(i),
                          number_at(*results[r], fmt::format("{}.{}.cycles", path, i))});
        }
        body += "<h3>" + escape_html(label + ": " + region) + "</h3>\n" + svg_hbars(bars, "cycles", 0);
      }
    body += prefill_steps(*results[r], label);
  }
  if (body.empty()) return "";
  return "<p class=\"note\">Each step of one region of each kind, for the first token (analytic results), and of "
         "the prefill region that takes a chunk longest, for the first chunk (the closed form's account).</p>\n" +
         body;
}

}  // namespace

void add_decode_sections(HtmlPage& page, const std::vector<const ReportInput*>& results) {
  if (results.empty()) return;
  page.add_section("metrics", "Metrics", metrics_table(results));
  page.add_section("critical-path", "Critical path", critical_path(results));
  page.add_section("per-layer", "Per layer", per_layer(results));
  const std::string steps = per_step(results);
  if (!steps.empty()) page.add_section("per-step", "Per step", steps);
  const std::string joules = energy(results);
  if (!joules.empty()) page.add_section("energy", "Energy", joules);
}

}  // namespace wafersim::cli
