#include <memory>

#include "models/cycle_limit.h"
#include "sim/backend/backend.h"
#include "sim/cli/commands.h"
#include "sim/cli/serve_capacity.h"
#include "sim/reports/compile.h"
#include "sim/reports/output.h"
#include "sim/reports/serve_explain.h"
#include "sim/reports/serve_report.h"

namespace wafersim::cli {

namespace {

struct ServeOptions {
  ExperimentOptions experiment;
  std::string requests_csv;  // --requests-csv FILE
  std::string step_times;    // --step-times FILE
  std::string backend = "analytic";
  CapacityFlags capacity;  // --capacity: a search over arrival rates instead of one run
  bool explain = false;    // --explain
};

void serve(const ServeOptions& options) {
  if (options.capacity.capacity)
    return serve_capacity(options.experiment, options.backend, options.step_times, options.capacity);
  const Experiment experiment = load_experiment(options.experiment.file, options.experiment.common.sets);
  const std::unique_ptr<backend::Backend> backend = backend::make_backend(options.backend);
  const auto compile = [&](const Experiment& compiled) {
    return compile_or_record_refusal(compiled, options.experiment.common.json_path);
  };
  const auto run = [&](const Experiment& served) {
    try {
      return serve_run(served, compile, *backend, options.step_times);
    } catch (const CycleLimitError& error) {
      refuse_too_long(served, error.what());
    }
  };
  const ServeOutcome outcome = run(experiment);
  nlohmann::json document = serve_json(experiment, outcome);
  std::string table = serve_table(outcome);
  if (options.explain) {
    document["explain"] = explain_serving(experiment, outcome, run);
    table += serve_explain_table(document["explain"]);
  }
  const CommonOptions& common = options.experiment.common;
  if (!common.quiet) common.table_out() << table;
  if (!options.requests_csv.empty()) write_text_atomically(options.requests_csv, requests_csv(outcome));
  if (!common.json_path.empty()) write_json(common.json_path, document);
  warn_if_prefill_overflows(outcome.chunk_tokens, outcome.prefill_sram_peak_bytes, experiment.hardware.tile.sram_bytes);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve", "Serve the experiment's request streams (serving section) over the closed form of its plan");
  add_experiment_options(*command, options->experiment);
  command->add_option("--requests-csv", options->requests_csv, "Write one line per request (times, outcome) to FILE")
      ->check([](const std::string& path) {
        return path.empty() || path == "-" ? std::string("needs a file name, got '" + path + "'") : "";
      });
  CLI::Option* step_times =
      command->add_option("--step-times", options->step_times,
                          "Scale each region's cycles to those a run of this experiment measured (its --json FILE)");
  std::string names;
  for (const std::string& name : backend::backend_names()) names += (names.empty() ? "" : ", ") + name;
  command
      ->add_option("--backend", options->backend,
                   "Where the step times come from (" + names +
                       "): analytic is the closed form; a measuring backend (sim: the engine) times the serving "
                       "plan's workload in this process and scales the closed form to it")
      ->check(CLI::IsMember(backend::backend_names()))
      ->excludes(step_times);
  add_capacity_options(*command, options->capacity);
  command->add_flag("--explain", options->explain,
                    "Say what holds the run back: how long queued requests waited for a batch slot or KV room, how "
                    "busy the pipeline was, what each class lost, and the run with max_batch doubled (table section "
                    "\"why\", JSON \"explain\")");
  command->callback([options] { serve(*options); });
}

}  // namespace wafersim::cli
