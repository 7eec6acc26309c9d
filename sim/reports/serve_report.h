#pragma once
// `wafersim serve`: an experiment's serving section run over the closed form
// of its compiled plan (docs/SERVING.md). The JSON document, the table and the
// per-request CSV it writes, as library functions.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/serving/serving_metrics.h"
#include "sim/serving/serving_sim.h"
#include "sim/serving/step_costs.h"
#include "workloads/serving/request_stream.h"

namespace wafersim::reports {

inline constexpr char kClosedForm[] = "closed form";

struct ServeOutcome {
  workloads::ServingSpec spec;
  std::string origin;  // of the requests
  serving::ServingRun run;
  serving::ServingMetrics metrics;
  // kClosedForm, or "engine" / "analytic": who measured the cycles the closed form
  // is scaled to, in step_times_file or (without one) in this process.
  std::string step_times_origin = kClosedForm;
  std::string step_times_file;
  double interpolation_error = 0;
  size_t interpolation_samples = 0;
  uint32_t chunk_tokens = 0;
  uint64_t prefill_sram_peak_bytes = 0;  // the prefill plan's fullest tile, its chunk's buffers held
  std::string model_label, hardware_label;
  uint32_t wafers = 0;
  // Speculative decoding: the draft's name and k, and the decode items (steps) behind decode_tokens.
  std::string draft_model;
  uint32_t draft_tokens = 0, target_rows = 0, draft_rows = 0;
};

// Builds the step costs of `plan` (compiled for serving_workload) and its
// prefill plan, and runs the serving loop over `stream`. The step costs are
// the closed form; with a backend that measures (the engine), each region's
// cycles are scaled by its measured / closed-form ratio on the serving plan's
// own workload, evaluated in this process as `run` evaluates it (the prefill
// in a child process). With `step_times_path` (the --json document of
// `wafersim run` or `analytic` of the same model and hardware), the ratios
// are that run's; CommandError (exit 2) when the file is unreadable or from
// another model, hardware or chunk size.
ServeOutcome serve_experiment(const Experiment& experiment, const mapping::Plan& plan,
                              const workloads::ServingSpec& spec, const workloads::RequestStream& stream,
                              const backend::Backend& backend, const std::string& step_times_path = "");

// The serving section and the requests it describes (a trace file read
// through, or the synthetic streams drawn), with every check serve makes on
// them: bad input is a ConfigError at the key or at the trace's file and line.
// Compiles nothing; what `validate` runs of serve.
struct ServingRequests {
  workloads::ServingSpec spec;
  workloads::RequestStream stream;
};
ServingRequests serving_requests(const Experiment& experiment);

// What `wafersim serve` runs, before its output: serving_requests (bad input
// refused before anything is compiled), the plan `compile` makes for the
// serving workload, and serve_experiment over them.
ServeOutcome serve_run(const Experiment& experiment, const std::function<mapping::Plan(const Experiment&)>& compile,
                       const backend::Backend& backend, const std::string& step_times_path = "");

const char* policy_name(workloads::SchedulerPolicy policy);
const char* transport_name(workloads::TransportKind kind);
// Tokens a speculative step emitted, on average (0 before the first step).
double tokens_per_step(const serving::ServingCounters& counters);

nlohmann::json serve_json(const Experiment& experiment, const ServeOutcome& outcome);
std::string serve_table(const ServeOutcome& outcome);
std::string requests_csv(const ServeOutcome& outcome);

}  // namespace wafersim::reports
