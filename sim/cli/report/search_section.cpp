// The section of a design search's output (`wafersim search`'s search.json):
// the Pareto front of its objective against its second figure, the default
// plan and the best one beside it, and the front's knobs as a table.
#include <fmt/format.h>

#include "sim/cli/report/report_sections.h"
#include "sim/cli/report/svg_charts.h"

namespace wafersim::cli {

namespace {

std::string text_of(const nlohmann::json* value) {
  if (!value || value->is_null()) return "—";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

// "mapping.reduce_k=3, hardware.wafers=2": the knobs a point sets.
std::string knobs(const nlohmann::json* values) {
  std::string out;
  if (values && values->is_object())
    for (const auto& [key, value] : values->items()) out += (out.empty() ? "" : ", ") + key + "=" + text_of(&value);
  return out;
}

// A point at `path` ("search.pareto.3", "default") as drawn: nothing when either figure is missing (not feasible).
void add_point(const ReportInput& input, const std::string& path, const std::string& name, bool on_front,
               std::vector<ScatterPoint>& points) {
  const nlohmann::json* objective = find_path(input.document, path + ".objective");
  const nlohmann::json* second = find_path(input.document, path + ".pareto");
  if (!objective || !second || objective->is_null() || second->is_null()) return;
  points.push_back({number_at(input, path + ".pareto"), number_at(input, path + ".objective"),
                    name + " " + knobs(find_path(input.document, path + ".values")), on_front});
}

std::string summary(const ReportInput& input) {
  const nlohmann::json& d = input.document;
  std::vector<std::vector<std::string>> rows;
  for (const char* path : {"experiment", "strategy", "evaluated", "objective.name", "pareto_against.name",
                           "default.objective", "best.objective", "gain_over_default", "default_on_front"})
    rows.push_back({path, text_of(find_path(d, path))});
  rows.push_back({"best plan", knobs(find_path(d, "best.values"))});
  return html_table({"figure", "value"}, rows, {false, true});
}

std::string front_table(const ReportInput& input) {
  const nlohmann::json* front = find_path(input.document, "pareto");
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; front && front->is_array() && i < front->size(); ++i) {
    const std::string at = fmt::format("pareto.{}.", i);
    rows.push_back(
        {knobs(find_path(input.document, at + "values")), text_of(find_path(input.document, at + "objective")),
         text_of(find_path(input.document, at + "pareto")), text_of(find_path(input.document, at + "file"))});
  }
  return html_table({"knobs", text_of(find_path(input.document, "objective.name")),
                     text_of(find_path(input.document, "pareto_against.name")), "point"},
                    rows, {false, true, true, false});
}

std::string search_body(const ReportInput& input) {
  std::vector<ScatterPoint> points;
  const nlohmann::json* front = find_path(input.document, "pareto");
  for (size_t i = 0; front && front->is_array() && i < front->size(); ++i)
    add_point(input, fmt::format("pareto.{}", i), "front:", true, points);
  add_point(input, "default", "default:", false, points);
  return summary(input) +
         "<p class=\"note\">The Pareto front in colour and joined, the default plan in grey (on the front, it is "
         "drawn twice); each point's knobs in its tooltip.</p>\n" +
         svg_scatter(points, text_of(find_path(input.document, "pareto_against.name")),
                     text_of(find_path(input.document, "objective.name"))) +
         front_table(input);
}

}  // namespace

void add_search_section(HtmlPage& page, const std::vector<const ReportInput*>& results) {
  if (results.empty()) return;
  std::string body;
  for (const ReportInput* input : results)
    body += "<h3>" + escape_html(result_label(*input)) + "</h3>\n" + search_body(*input);
  page.add_section("search", "Search", body);
}

}  // namespace wafersim::cli
