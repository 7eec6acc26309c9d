// The section of a design search's output: its points and Pareto front over two
// objectives. What it reads is the contract docs/REPORT.md states ("search"
// object: "objectives", two dotted paths into each point, and "points", each
// with "pareto" true on the front and an optional "label"); an output without
// them gets a note saying so instead of a chart.
#include <algorithm>

#include <fmt/format.h>

#include "sim/cli/report/report_sections.h"
#include "sim/cli/report/svg_charts.h"

namespace wafersim::cli {

namespace {

std::string search_chart(const ReportInput& input) {
  const nlohmann::json* objectives = find_path(input.document, "search.objectives");
  const nlohmann::json* points = find_path(input.document, "search.points");
  if (!objectives || !objectives->is_array() || objectives->size() != 2 || !(*objectives)[0].is_string() ||
      !(*objectives)[1].is_string() || !points || !points->is_array())
    return "<p class=\"note\">No chart: the page draws a search's \"objectives\" (two names) over its "
           "\"points\" (docs/REPORT.md), and this output has not both.</p>\n";
  const std::string x = (*objectives)[0].get<std::string>(), y = (*objectives)[1].get<std::string>();
  std::vector<ScatterPoint> drawn;
  for (size_t i = 0; i < points->size(); ++i) {
    const std::string at = fmt::format("search.points.{}.", i);
    const nlohmann::json* label = find_path(input.document, at + "label");
    const nlohmann::json* pareto = find_path(input.document, at + "pareto");
    drawn.push_back({number_at(input, at + x), number_at(input, at + y),
                     label && label->is_string() ? label->get<std::string>() : fmt::format("point {}", i),
                     pareto && pareto->is_boolean() && pareto->get<bool>()});
  }
  const size_t on_front = size_t(std::count_if(drawn.begin(), drawn.end(), [](auto& p) { return p.highlighted; }));
  return fmt::format("<p class=\"note\">{} points, {} on the Pareto front (in colour, joined).</p>\n", drawn.size(),
                     on_front) +
         svg_scatter(drawn, x, y);
}

}  // namespace

void add_search_section(HtmlPage& page, const std::vector<const ReportInput*>& results) {
  if (results.empty()) return;
  std::string body;
  for (const ReportInput* input : results)
    body += "<h3>" + escape_html(result_label(*input)) + "</h3>\n" + search_chart(*input);
  page.add_section("search", "Search", body);
}

}  // namespace wafersim::cli
