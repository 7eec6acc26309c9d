// wafersim compare: the experiment's closed form on the wafer beside the GPU
// reference of the same model and workload (docs/GPU_REFERENCE.md).
#include <memory>

#include "models/gpu.h"
#include "sim/cli/commands.h"
#include "sim/reports/compare_report.h"
#include "sim/reports/compile.h"
#include "sim/reports/output.h"

namespace wafersim::cli {

namespace {

void compare(const ExperimentOptions& options, const std::string& against) {
  GpuSystem system;
  const std::string bad_against = parse_gpu_system(against, &system);
  if (!bad_against.empty()) throw CommandError(kExitBadInput, "--against: " + bad_against);
  const Experiment experiment = load_experiment(options.file, options.common.sets);
  if (!options.common.json_path.empty()) check_writable(options.common.json_path);
  // The GPUs' answer first: it takes milliseconds, the wafer's plan seconds.
  const gpu_reference::Result gpu = gpu_reference_of(experiment, system);
  const mapping::Plan plan = compile_or_record_refusal(experiment, options.common.json_path);
  const Report report = compare_report(experiment, plan, gpu, nullptr);
  if (!options.common.quiet) options.common.table_out() << report.table;
  if (!options.common.json_path.empty()) write_json(options.common.json_path, report.document);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<ExperimentOptions>();
  auto against = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "compare",
      "The experiment's closed form on the wafer beside a closed-form GPU reference of the same model and workload "
      "(tokens/s per user, per-token latency, time to first token, tokens/s per kW)");
  add_experiment_options(*command, *options);
  command->add_option("--against", *against, "GPU system: h100xN, b200xN or a100xN (N GPUs, tensor parallel)")
      ->required();
  command->callback([options, against] { compare(*options, *against); });
}

}  // namespace wafersim::cli
