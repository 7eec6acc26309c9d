// The "why" of a result: its `explain` object as `run`, `analytic` and `serve`
// write it (the binding resource, the knobs that would move the objective),
// shown as nested terms and values whatever keys it holds, so the page needs no
// change when the explanation grows a key.
#include "sim/cli/report/report_sections.h"

namespace wafersim::cli {

namespace {

std::string scalar_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string explain_html(const nlohmann::json& value) {
  if (value.is_object()) {
    std::string out = "<dl class=\"explain\">";
    for (const auto& [key, item] : value.items())
      out += "<dt>" + escape_html(key) + "</dt><dd>" + explain_html(item) + "</dd>";
    return out + "</dl>\n";
  }
  if (value.is_array()) {
    std::string out = "<ol>";
    for (const nlohmann::json& item : value) out += "<li>" + explain_html(item) + "</li>";
    return out + "</ol>\n";
  }
  return escape_html(scalar_text(value));
}

}  // namespace

void add_explain_section(HtmlPage& page, const std::vector<ReportInput>& inputs) {
  std::string body;
  for (const ReportInput& input : inputs)
    if (input.document.contains("explain"))
      body += "<h3>" + escape_html(result_label(input)) + "</h3>\n" + explain_html(input.document.at("explain"));
  if (!body.empty()) page.add_section("why", "Why", body);
}

}  // namespace wafersim::cli
