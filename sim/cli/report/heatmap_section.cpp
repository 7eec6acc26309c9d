// The section of --heatmaps folders: one map per array and wafer, as
// scripts/heatmaps.py draws them, at a resolution a page can hold.
#include <fmt/format.h>

#include "sim/cli/report/report_sections.h"
#include "sim/cli/report/svg_charts.h"

namespace wafersim::cli {

void add_heatmap_section(HtmlPage& page, const std::vector<HeatmapFolder>& heatmaps) {
  if (heatmaps.empty()) return;
  std::string body;
  for (const HeatmapFolder& folder : heatmaps) {
    body +=
        "<p class=\"note\">" +
        escape_html(folder.folder + ": " + folder.model + " on " + folder.hardware + ", from the " + folder.source) +
        "</p>\n<div class=\"maps\">\n";
    // Side by side, as many to a row as the window holds.
    for (const HeatmapArray& array : folder.arrays) {
      // Region ids are names, not amounts: a colour scale from zero would rank them.
      if (array.quantity == "region_id") continue;
      body += "<div>\n<h3>" + escape_html(fmt::format("{}, wafer {}", array.quantity, array.wafer)) +
              "</h3>\n<p class=\"note\">" + escape_html(array.description) + "</p>\n" +
              (array.categories.empty() ? svg_heatmap(array.grid, array.unit)
                                        : svg_categories(array.grid, array.categories)) +
              "</div>\n";
    }
    body += "</div>\n";
  }
  page.add_section("heatmaps", "Heatmaps", body);
}

}  // namespace wafersim::cli
