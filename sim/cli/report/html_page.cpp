#include "sim/cli/report/html_page.h"

#include "sim/experiment/version.h"

namespace wafersim::cli {

namespace {

// System fonts only: the page loads nothing.
const char* const kStyle = R"(
body { font-family: sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1100px; color: #222; line-height: 1.35; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 2px 8px; } th { background: #f3f3f3; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
svg { display: block; margin: 0.3em 0 1em; font-size: 11px; }
svg text { fill: #222; } .axis { stroke: #888; stroke-width: 1; } .grid { stroke: #e4e4e4; stroke-width: 1; }
p.note { color: #555; font-size: 0.9em; } nav li { display: inline; margin-right: 1em; }
div.maps { display: flex; flex-wrap: wrap; gap: 0 1.5em; } div.maps > div { width: 440px; }
dl.explain dt { font-weight: bold; } dl.explain dd { margin: 0 0 0.4em 1.5em; }
)";

}  // namespace

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& numeric) {
  std::string out = "<table><tr>";
  for (const std::string& header : headers) out += "<th>" + escape_html(header) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out += (c < numeric.size() && numeric[c] ? "<td class=\"n\">" : "<td>") + escape_html(row[c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

void HtmlPage::add_section(const std::string& id, const std::string& title, const std::string& body) {
  sections_.push_back({id, title, body});
}

std::string HtmlPage::str() const {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>" +
      escape_html(title_) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + escape_html(title_) +
      "</h1>\n<p class=\"note\">written by wafersim " + escape_html(version()) + "</p>\n<nav><ul>";
  for (const Section& section : sections_)
    out += "<li><a href=\"#" + section.id + "\">" + escape_html(section.title) + "</a></li>";
  out += "</ul></nav>\n";
  for (const Section& section : sections_)
    out += "<section id=\"" + section.id + "\">\n<h2>" + escape_html(section.title) + "</h2>\n" + section.body +
           "</section>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace wafersim::cli
