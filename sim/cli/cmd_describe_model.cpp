// `wafersim describe model [NAME]`: the command around describe_model_report (sim/reports).
#include <memory>

#include "sim/cli/commands.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"

namespace wafersim::cli {

namespace {

struct DescribeOptions {
  std::string name;
  uint64_t context = 0;  // 0 = the default, 4096 or the model's limit
  uint32_t batch = 1;
  CommonOptions common;
};

void list_models(const DescribeOptions& options) {
  const Report report = model_list_report(options.common.sets);
  if (!options.common.quiet) options.common.table_out() << report.table;
  if (!options.common.json_path.empty()) write_json(options.common.json_path, report.document);
}

void describe_model(const DescribeOptions& options) {
  if (options.name.empty()) return list_models(options);
  const Report report = describe_model_report(options.name, options.context, options.batch, options.common.sets);
  if (!options.common.quiet) options.common.table_out() << report.table;
  if (!options.common.json_path.empty()) write_json(options.common.json_path, report.document);
}

}  // namespace

void add_describe_model_subcommand(CLI::App& describe) {
  auto options = std::make_shared<DescribeOptions>();
  CLI::App* command = describe.add_subcommand(
      "model", "A model's parameters and the ops of one decode step: shapes, FLOPs, weight and KV-cache bytes");
  command->add_option("NAME", options->name,
                      "Zoo model name (see workloads/models) or path to a model file; without one, lists the zoo");
  command->add_option("--context", options->context, "Positions attended by the decoded token (default 4096)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  command->add_option("--batch", options->batch, "Sequences decoded together (default 1)")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 20));
  add_common_options(*command, options->common);
  command->callback([options] { describe_model(*options); });
}

}  // namespace wafersim::cli
