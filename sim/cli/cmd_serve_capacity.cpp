#include <iostream>

#include "sim/backend/backend.h"
#include "sim/cli/serve_capacity.h"
#include "sim/reports/capacity_search.h"
#include "sim/reports/compile.h"
#include "sim/reports/output.h"

namespace wafersim::cli {

void add_capacity_options(CLI::App& serve, CapacityFlags& flags) {
  CLI::Option* capacity =
      serve
          .add_flag("--capacity", flags.capacity,
                    "Search the largest arrival rate of each class that meets --slo (bracketing, then bisection)")
          ->excludes(serve.get_option("--requests-csv"));
  serve.add_option("--slo", flags.slo, "With --capacity: bounds in ms, e.g. ttft_p99_ms=500,tpot_p99_ms=2")
      ->needs(capacity);
  serve
      .add_option("--capacity-seeds", flags.seeds, "With --capacity: serving seeds per step; a step meets when all do")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u))
      ->needs(capacity);
  serve
      .add_option("--capacity-tolerance", flags.tolerance,
                  "With --capacity: stop when the lowest violating rate is within this fraction of the highest meeting")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0))
      ->needs(capacity);
}

void serve_capacity(const ExperimentOptions& experiment, const std::string& backend_name, const std::string& step_times,
                    const CapacityFlags& flags) {
  if (flags.slo.empty())
    throw CommandError(kExitBadInput, "--capacity needs --slo KEY=MS[,KEY=MS...], e.g. ttft_p99_ms=500,tpot_p99_ms=2");
  CapacityOptions options;
  options.slo = parse_slo(flags.slo);
  options.seeds = flags.seeds;
  options.tolerance = flags.tolerance;
  if (experiment.file == "-")
    throw CommandError(kExitBadInput, "--capacity loads the experiment once per step: give it a file, not -");
  const std::unique_ptr<backend::Backend> backend = backend::make_backend(backend_name);
  if (!backend->is_closed_form())
    throw CommandError(kExitBadInput, "serve --capacity --backend " + backend_name +
                                          ": every step would run the engine again; measure once with wafersim run "
                                          "and pass its --json as --step-times");
  const CommonOptions& common = experiment.common;
  auto load = [&](const std::vector<std::string>& step_sets) {
    std::vector<std::string> sets = common.sets;
    sets.insert(sets.end(), step_sets.begin(), step_sets.end());
    return load_experiment(experiment.file, sets);
  };
  auto compile = [&](const Experiment& compiled) { return compile_or_record_refusal(compiled, common.json_path); };
  auto progress = [&](const ClassCapacity& searched) {
    if (!common.quiet) std::cerr << capacity_step_line(options, searched) << std::endl;
  };
  const CapacityResult result = capacity_search(load, compile, *backend, step_times, options, progress);
  if (!common.quiet) common.table_out() << capacity_table(options, result);
  if (!common.json_path.empty()) write_json(common.json_path, capacity_json(load({}), options, result));
}

}  // namespace wafersim::cli
