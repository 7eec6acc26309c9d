#include <filesystem>

#include "sim/cli/report/report_sections.h"

namespace wafersim::cli {

namespace {

std::string text_at(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* value = find_path(document, path);
  if (!value || value->is_null()) return "—";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

std::vector<const ReportInput*> of_kind(const std::vector<ReportInput>& inputs, ResultKind kind) {
  std::vector<const ReportInput*> out;
  for (const ReportInput& input : inputs)
    if (input.kind == kind) out.push_back(&input);
  return out;
}

std::string overview(const std::vector<ReportInput>& inputs, const std::vector<HeatmapFolder>& heatmaps) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportInput& input : inputs) {
    const char* kind = input.kind == ResultKind::kDecode  ? "decode"
                       : input.kind == ResultKind::kServe ? "serve"
                                                          : "search";
    rows.push_back({input.path, kind, result_label(input), text_at(input.document, "config_hash"),
                    text_at(input.document, "version")});
  }
  for (const HeatmapFolder& folder : heatmaps)
    rows.push_back(
        {folder.folder, "heatmaps (" + folder.source + ")", folder.model + " on " + folder.hardware, "", ""});
  return html_table({"input", "kind", "what was run", "config hash", "version"}, rows, {});
}

}  // namespace

std::string result_label(const ReportInput& input) {
  const nlohmann::json& document = input.document;
  const std::string file = std::filesystem::path(input.path).filename().string();
  std::string what = text_at(document, "experiment.model") + " on " + text_at(document, "experiment.hardware") + " (" +
                     text_at(document, "experiment.wafers") + " wafer(s))";
  if (input.kind == ResultKind::kDecode)
    what += ", batch " + text_at(document, "experiment.batch") + " [" + text_at(document, "engine") + "]";
  else if (input.kind == ResultKind::kServe)
    what += ", serve, max batch " + text_at(document, "experiment.max_batch");
  else
    what = "search of " + text_at(document, "experiment") + " by " + text_at(document, "strategy");
  return file + ": " + what;
}

std::string report_page(const std::vector<ReportInput>& inputs, const std::vector<HeatmapFolder>& heatmaps) {
  HtmlPage page("wafersim report");
  page.add_section("inputs", "Inputs", overview(inputs, heatmaps));
  add_explain_section(page, inputs);
  add_decode_sections(page, of_kind(inputs, ResultKind::kDecode));
  add_serve_section(page, of_kind(inputs, ResultKind::kServe));
  add_search_section(page, of_kind(inputs, ResultKind::kSearch));
  add_heatmap_section(page, heatmaps);
  return page.str();
}

}  // namespace wafersim::cli
