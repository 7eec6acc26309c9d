// The section of serve results: the figures of every request class, as serve's
// table declares them (serving_metric_table.cpp), and the latency percentiles.
#include <fmt/format.h>

#include "sim/cli/report/report_sections.h"
#include "sim/cli/report/svg_charts.h"
#include "sim/reports/serving_metric_table.h"

namespace wafersim::cli {

namespace {

// Where a class's figures are: every request's at "serving.", a class's below it.
struct Column {
  std::string title;
  std::string prefix;
};

std::vector<Column> columns_of(const ReportInput& input) {
  std::vector<Column> columns = {{"all requests", "serving."}};
  const nlohmann::json* classes = find_path(input.document, "serving.classes");
  if (classes && classes->is_object())
    for (const auto& [name, figures] : classes->items()) columns.push_back({name, "serving.classes." + name + "."});
  return columns;
}

std::string cell(const ReportInput& input, const std::string& path, const reports::TableRow& row) {
  const nlohmann::json* value = find_path(input.document, path);
  if (!value) return "";
  if (!value->is_null()) number_at(input, path);  // refuses a value that is not a number
  return reports::table_cell(row, *value);
}

std::string class_table(const ReportInput& input, const std::vector<Column>& columns) {
  std::vector<std::string> headers = {"figure"};
  for (const Column& column : columns) headers.push_back(column.title);
  headers.push_back("unit");
  std::vector<std::vector<std::string>> rows;
  for (const reports::ClassFigure& figure : reports::serving_class_table()) {
    if (!figure.row) continue;
    std::vector<std::string> row = {figure.row->label};
    for (const Column& column : columns) row.push_back(cell(input, column.prefix + figure.path, *figure.row));
    row.push_back(figure.row->unit);
    rows.push_back(row);
  }
  std::vector<bool> numeric(headers.size(), true);
  numeric.front() = numeric.back() = false;
  return html_table(headers, rows, numeric);
}

// The run's own figures (set-up, utilisation, duration, ...) with their units.
std::string run_table(const ReportInput& input) {
  std::vector<std::vector<std::string>> rows;
  for (const reports::RunFigure& figure : reports::serving_run_table()) {
    const nlohmann::json* value = find_path(input.document, figure.path);
    // Those without a dot (fits, config_hash, version, config) are in the inputs' table or too long.
    if (!value || value->is_object() || figure.path.find('.') == std::string::npos) continue;
    rows.push_back({figure.path, value->is_string() ? value->get<std::string>() : value->dump(), figure.unit});
  }
  return html_table({"figure", "value", "unit"}, rows, {false, true, false});
}

// p50, p90 and p99 of one distribution for every column that has them.
std::string percentiles(const ReportInput& input, const std::vector<Column>& columns, const std::string& distribution) {
  std::vector<Bar> bars;
  for (const Column& column : columns)
    for (const char* statistic : {"p50", "p90", "p99"}) {
      const std::string path = column.prefix + distribution + "." + statistic;
      const nlohmann::json* value = find_path(input.document, path);
      if (value && !value->is_null()) bars.push_back({column.title + " " + statistic, number_at(input, path)});
    }
  if (bars.empty()) return "";
  return "<h3>" + escape_html(distribution) + "</h3>\n" + svg_hbars(bars, "ms", 3);
}

}  // namespace

void add_serve_section(HtmlPage& page, const std::vector<const ReportInput*>& results) {
  if (results.empty()) return;
  std::string body =
      "<p class=\"note\">Request-level serving (docs/SERVING.md): figures of every request and of each class; "
      "— where a class has no samples.</p>\n";
  for (const ReportInput* input : results) {
    const std::vector<Column> columns = columns_of(*input);
    body += "<h3>" + escape_html(result_label(*input)) + "</h3>\n" + class_table(*input, columns) + run_table(*input);
    for (const char* distribution : {"ttft_ms", "tpot_ms", "e2e_ms", "queue_ms"})
      body += percentiles(*input, columns, distribution);
  }
  page.add_section("serving", "Serving", body);
}

}  // namespace wafersim::cli
