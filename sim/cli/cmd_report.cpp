// wafersim report: the --json results of run, analytic and serve, the
// search.json of search and --heatmaps folders as one self-contained HTML page
// (docs/REPORT.md).
#include <memory>

#include "sim/cli/commands.h"
#include "sim/cli/report/report_sections.h"
#include "sim/reports/output.h"

namespace wafersim::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> heatmap_folders;
  std::string out_path;
};

void report(const ReportOptions& options) {
  // Every input is read and checked before the page is written: a bad one leaves no file.
  check_writable(options.out_path);
  std::vector<ReportInput> inputs;
  for (const std::string& path : options.inputs) inputs.push_back(read_report_input(path));
  std::vector<HeatmapFolder> heatmaps;
  for (const std::string& folder : options.heatmap_folders) heatmaps.push_back(read_heatmap_folder(folder));
  const std::string page = report_page(inputs, heatmaps);
  if (options.out_path == "-")
    std::cout << page << std::flush;
  else
    write_text_atomically(options.out_path, page);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "One self-contained HTML page of results: metrics, critical path, per layer and per step, energy, serving "
      "percentiles, a search's Pareto front, heatmaps (no script, nothing loaded from elsewhere)");
  command->add_option("RESULT", options->inputs, "--json FILE of run, analytic or serve, or the search.json of search")
      ->required();
  command->add_option("-o,--out", options->out_path, "The HTML file to write ('-' = stdout)")
      ->required()
      ->check([](const std::string& path) {
        return path.empty() ? std::string("needs a file name, got an empty one") : "";
      });
  command->add_option("--heatmaps", options->heatmap_folders,
                      "A folder run --heatmaps or map --heatmaps wrote (repeatable)");
  command->callback([options] { report(*options); });
}

}  // namespace wafersim::cli
