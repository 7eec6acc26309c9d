#pragma once
// The sections of the report page, one file per kind of input: decode results
// (run, analytic), serve results, a search's search.json, the "why" of any result
// that explains itself, and --heatmaps folders (docs/REPORT.md).
#include <string>
#include <vector>

#include "sim/cli/report/html_page.h"
#include "sim/cli/report/report_inputs.h"

namespace wafersim::cli {

// The whole page: an overview of the inputs, then each section that has something to show.
std::string report_page(const std::vector<ReportInput>& inputs, const std::vector<HeatmapFolder>& heatmaps);

// How a result is named on the page: its file's name and what was run.
std::string result_label(const ReportInput& input);

// Metrics table, critical path, per layer, per step, energy: every run and analytic result.
void add_decode_sections(HtmlPage& page, const std::vector<const ReportInput*>& results);
// Each serve result's figures per request class and its latency percentiles.
void add_serve_section(HtmlPage& page, const std::vector<const ReportInput*>& results);
// A search's Pareto front, its default and best plans.
void add_search_section(HtmlPage& page, const std::vector<const ReportInput*>& results);
// The `explain` object of any result that has one.
void add_explain_section(HtmlPage& page, const std::vector<ReportInput>& inputs);
void add_heatmap_section(HtmlPage& page, const std::vector<HeatmapFolder>& heatmaps);

}  // namespace wafersim::cli
