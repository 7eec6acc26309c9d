#pragma once
// What run, analytic, map, validate and `describe model` produce, as library
// functions: the JSON document each writes with --json and the table it prints.
// The commands and the Python module (python/) both call these, so the two
// always agree key for key.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/reports/timeline_trace.h"

namespace wafersim::reports {

struct Report {
  nlohmann::json document;         // what --json writes
  std::string table;               // what the command prints
  nlohmann::json trace = nullptr;  // what --trace writes, when asked for (timeline_trace.h)
  std::shared_ptr<const backend::TileFigures> tiles = nullptr;  // what --heatmaps draws, when asked for (engine only)
};

// `run` (backend "sim") or `analytic` (backend "analytic") of a compiled plan.
// `begin` is when the command started: the wall time counts loading and compiling.
// With a `trace` window, Report::trace holds the timeline trace of that window;
// with `tile_figures`, Report::tiles the decode's busy cycles of every tile and link (engine only).
Report decode_report(const Experiment& experiment, const mapping::Plan& plan, const std::string& backend_name,
                     const backend::ProgressFn& progress, std::chrono::steady_clock::time_point begin,
                     const TraceWindow* trace = nullptr, bool tile_figures = false);

// `map`: the plan, compiled in `compile_seconds`.
Report map_report(const Experiment& experiment, const mapping::Plan& plan, double compile_seconds);

// `validate`: `name` is the file the configuration came from.
nlohmann::json validate_document(const config::Config& config, const std::string& name);

// What `validate` checks: every check run, analytic and serve make on their
// input before they compile a plan, through the same functions, so that a
// file validate passes fails in none of them on its input (whether the model
// fits is the compiler's answer: map, exit 3). The typed specs' cross-field
// checks, the functional check's refusal (sim.functional) and, when the
// configuration gives any serving.* value, the serving section and the
// requests it describes (serving_requests: a trace file is read through).
// Throws what those commands would: a ConfigError at the key, or at the
// trace's file and line.
Experiment check_experiment(const config::Config& config);

// `describe model NAME` (context 0: 4096 or the model's limit) and `describe model` (the zoo).
Report describe_model_report(const std::string& name, uint64_t context, uint32_t batch,
                             const std::vector<std::string>& overrides);
Report model_list_report(const std::vector<std::string>& overrides);

}  // namespace wafersim::reports
