#include "sim/cli/decode_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cli/metric_table.h"
#include "sim/cli/output.h"

namespace wafersim::cli {

nlohmann::json decode_json(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                           const backend::RunFigures& figures) {
  nlohmann::json document = nlohmann::json::object();
  write_metrics({experiment, plan, metrics, figures}, document);
  return document;
}

std::string decode_table(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                         const backend::RunFigures& figures) {
  std::string out =
      fmt::format("{} on {} ({} wafer(s)), batch {}, {}, {} decoded tokens per sequence [{}]\n",
                  section_label(experiment.config, "model", plan.model.name),
                  section_label(experiment.config, "hardware", plan.hw.name), plan.hw.wafers, plan.workload.batch,
                  plan.workload.prompt_lengths.empty()
                      ? fmt::format("prompt {} tokens", plan.workload.prompt_tokens)
                      : fmt::format("prompts of {} tokens", fmt::join(plan.workload.prompt_lengths, ", ")),
                  plan.workload.decode_tokens, figures.backend);
  Table table({{"metric", "", false}, {"value", "", true}, {"unit", "", false}});
  for (std::vector<std::string>& row : metric_rows({experiment, plan, metrics, figures})) table.add_row(std::move(row));
  out += table.str();
  if (!figures.first_token_steps.empty()) {
    Table steps({{"region", "", false}, {"step", "", false}, {"cycles", "", true}});
    for (const backend::StepCycles& step : figures.first_token_steps)
      steps.add_row({step.region, step.step, std::to_string(step.cycles)});
    out += "\nsteps of the first token:\n" + steps.str();
  }
  return out;
}

}  // namespace wafersim::cli
