#include "sim/reports/serve_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "mapping/plan.h"
#include "mapping/verify_plan.h"
#include "models/config/error.h"
#include "models/config/text.h"
#include "sim/experiment/speculative_placement.h"
#include "sim/experiment/version.h"
#include "sim/reports/command_error.h"
#include "sim/reports/decode_run.h"
#include "sim/reports/output.h"
#include "sim/reports/serving_metric_table.h"

namespace wafersim::reports {

namespace {

[[noreturn]] void bad_step_times(const std::string& path, const std::string& why) {
  throw CommandError(kExitBadInput, path + ": " + why);
}

// What serve's JSON calls the cycles of a backend: the engine's (backend sim) are "engine".
std::string step_times_origin(const std::string& backend) { return backend == "sim" ? "engine" : backend; }

// Cycles a backend measured per region, per decode token and per prefill chunk,
// and the mean contexts it measured them at.
struct MeasuredSteps {
  std::string origin;  // "engine" or "analytic"
  std::vector<LayerCycles> decode, prefill;
  double decode_context = 0, prefill_context = 0;
};

// The contexts a run measured at, on average: decode token t attends to
// prompt + t + 1 positions, prefill chunk k to k * size + (size + 1) / 2.
void set_contexts(MeasuredSteps& measured, double prompt_tokens, double decode_tokens, double chunks,
                  uint64_t chunk_tokens) {
  measured.decode_context = prompt_tokens + (decode_tokens + 1) / 2;
  measured.prefill_context = double(chunk_tokens) * (chunks - 1) / 2 + double((chunk_tokens + 1) / 2);
}

// The per-layer rows of a run's --json document (`field`: cycles_per_token or cycles_per_chunk).
std::vector<LayerCycles> layer_rows(const std::string& path, const nlohmann::json& rows, const char* field) {
  if (!rows.is_array()) bad_step_times(path, std::string("has no per-layer ") + field);
  std::vector<LayerCycles> layers;
  for (size_t r = 0; r < rows.size(); ++r) {
    const nlohmann::json& row = rows[r];
    if (!row.is_object() || !row.contains("region") || !row["region"].is_string() || !row.contains(field) ||
        !row[field].is_number() || !(row[field].get<double>() > 0))
      bad_step_times(path, "region " + std::to_string(r) + " has no measured " + field);
    layers.push_back({row["region"].get<std::string>(), row[field].get<double>()});
  }
  return layers;
}

// What a run's --json document measured; CommandError (exit 2) when it is not
// one, or a run of another model, hardware or chunk size.
MeasuredSteps read_step_times(const std::string& path, const Experiment& experiment, const mapping::Plan& plan,
                              uint32_t chunk_tokens) {
  std::ifstream in(path);
  if (!in) bad_step_times(path, "cannot read the step-times file");
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    bad_step_times(path, "not a JSON document (expected what wafersim run --json writes)");
  }
  if (!run.is_object() || !run.contains("metrics") || !run.contains("experiment") || !run["experiment"].is_object() ||
      !run["metrics"].is_object() || run.value("fits", false) != true)
    bad_step_times(path, "not the result of a run (expected what wafersim run --json writes)");
  const nlohmann::json& setup = run["experiment"];
  const std::string model = section_label(experiment.config, "model", plan.model.name);
  const std::string hardware = section_label(experiment.config, "hardware", plan.hw.name);
  if (setup.value("model", std::string()) != model || setup.value("hardware", std::string()) != hardware)
    bad_step_times(path, "is a run of " + setup.value("model", std::string("?")) + " on " +
                             setup.value("hardware", std::string("?")) + ", not of " + model + " on " + hardware);
  // mapping.kv_head_copies: auto resolves by the workload's context, which serve's plan may not share.
  const uint64_t copies = setup.value("kv_head_copies", uint64_t(1));
  if (copies != plan.options.kv_head_copies)
    bad_step_times(path, fmt::format("measured a plan with {} copies of each KV head; serve's plan keeps {} (set "
                                     "mapping.kv_head_copies: {} for the run)",
                                     copies, plan.options.kv_head_copies, plan.options.kv_head_copies));
  const nlohmann::json& metrics = run["metrics"];
  const nlohmann::json prefill_run = metrics.value("prefill", nlohmann::json());
  if (!prefill_run.is_object()) bad_step_times(path, "has no prefill; run it with workload.prefill: true");
  const uint64_t measured_chunk_tokens = prefill_run.value("chunk_tokens", uint64_t(0));
  if (measured_chunk_tokens != chunk_tokens)
    bad_step_times(path, "measured prefill chunks of " + std::to_string(measured_chunk_tokens) +
                             " tokens; serve uses " + std::to_string(chunk_tokens) +
                             " (workload.prefill_chunk_tokens, mapping.prefill_chunk)");
  MeasuredSteps measured;
  measured.origin = step_times_origin(run.value("engine", std::string("?")));
  measured.decode = layer_rows(path, metrics.value("per_layer", nlohmann::json()), "cycles_per_token");
  measured.prefill = layer_rows(path, prefill_run.value("per_layer", nlohmann::json()), "cycles_per_chunk");
  set_contexts(measured, setup.value("prompt_tokens", 0.0), setup.value("decode_tokens", 1.0),
               prefill_run.value("chunks", 1.0), chunk_tokens);
  return measured;
}

// What `backend` measures of the serving plan's own workload (batch 1, the
// prefill in chunks), evaluated here as `run` evaluates it.
MeasuredSteps measure_step_times(const Experiment& experiment, const mapping::Plan& plan,
                                 const backend::Backend& backend) {
  Experiment served = experiment;
  served.workload = plan.workload;
  const DecodeRun run = run_decode(served, plan, backend, served.sim, {});
  const PrefillMetrics& prefill = *run.metrics.prefill;  // serving_plan_workload asks for the prefill
  MeasuredSteps measured;
  measured.origin = step_times_origin(backend.name());
  measured.decode = run.metrics.per_layer;
  measured.prefill = prefill.per_layer;
  set_contexts(measured, double(plan.workload.prompt_tokens), double(plan.workload.decode_tokens),
               double(prefill.chunks), prefill.chunk_tokens);
  return measured;
}

// Measured / closed-form cycles of each region. Both are the same figure
// (metrics.per_layer, a region's span in the timeline), the closed form's
// taken on the serving plan's own workload; where the measurement was at
// another context, the table's ratio between the two contexts carries it
// over (the table times a region on its own, which is not the span).
std::vector<double> measured_ratios(const std::string& source, const std::vector<LayerCycles>& measured,
                                    double measured_context, const std::vector<LayerCycles>& closed,
                                    double closed_context, const std::vector<mapping::Region>& regions,
                                    const serving::StepCosts& costs, serving::ItemKind kind) {
  const size_t count = regions.size();
  if (measured.size() != count)
    bad_step_times(source, "has " + std::to_string(measured.size()) + " " +
                               (kind == serving::ItemKind::Decode ? "decode" : "prefill") + " regions; this plan has " +
                               std::to_string(count) + " (another model or mapping?)");
  std::vector<double> ratios;
  for (size_t r = 0; r < count; ++r) {
    if (measured[r].name != regions[r].name)
      bad_step_times(source, "region " + std::to_string(r) + " is not " + config::quoted(regions[r].name) +
                                 " (another model or mapping?)");
    const double closed_at_measured = closed[r].cycles_per_token * costs.service_cycles(kind, r, measured_context) /
                                      std::max(costs.service_cycles(kind, r, closed_context), 1.0);
    ratios.push_back(measured[r].cycles_per_token / std::max(closed_at_measured, 1.0));
  }
  return ratios;
}

// Scales the closed form's cycles of every region to the measured ones.
void apply_step_times(const std::string& source, const MeasuredSteps& measured, const Experiment& experiment,
                      const mapping::Plan& plan, const mapping::Plan& prefill, serving::StepCosts& costs) {
  const MeasuredSteps closed = measure_step_times(experiment, plan, *backend::make_backend("analytic"));
  costs.scale(serving::ItemKind::Decode,
              measured_ratios(source, measured.decode, measured.decode_context, closed.decode, closed.decode_context,
                              plan.regions, costs, serving::ItemKind::Decode));
  costs.scale(serving::ItemKind::Prefill,
              measured_ratios(source, measured.prefill, measured.prefill_context, closed.prefill,
                              closed.prefill_context, prefill.regions, costs, serving::ItemKind::Prefill));
}

}  // namespace

ServingRequests serving_requests(const Experiment& experiment) {
  ServingRequests requests;
  requests.spec = workloads::serving_from_config(experiment.config, experiment.model);
  requests.stream = workloads::request_stream(requests.spec, experiment.model.max_positions);
  // A window that no request arrives in would report zeros as if something had been served.
  if (const double duration_s = requests.spec.duration_s; duration_s > 0) {
    double first_s = INFINITY;
    for (const workloads::Session& session : requests.stream.sessions)
      first_s = std::min(first_s, session.turns[0].arrival_s);
    if (first_s >= duration_s)
      throw config::ConfigError(experiment.config.where("serving.duration_s"), "serving.duration_s",
                                fmt::format("serving.duration_s: no request arrives in the first {} s (the first at "
                                            "{:.6g} s); lengthen it or raise a class's rate_per_s",
                                            duration_s, first_s));
  }
  return requests;
}

ServeOutcome serve_run(const Experiment& experiment, const std::function<mapping::Plan(const Experiment&)>& compile,
                       const backend::Backend& backend, const std::string& step_times_path) {
  const ServingRequests requests = serving_requests(experiment);
  Experiment compiled = experiment;
  compiled.workload = workloads::serving_plan_workload(experiment.workload);
  // The plan is compiled for one sequence and the SRAM it leaves is the KV
  // share every resident sequence draws on: copies of the KV heads would
  // spend that share on speed, so auto means one copy here, for the target
  // and a speculative draft alike (mapping.kv_head_copies still sets more).
  if (compiled.mapping.kv_head_copies == 0) compiled.mapping.kv_head_copies = 1;
  return serve_experiment(compiled, compile(compiled), requests.spec, requests.stream, backend, step_times_path);
}

ServeOutcome serve_experiment(const Experiment& experiment, const mapping::Plan& plan,
                              const workloads::ServingSpec& spec, const workloads::RequestStream& stream,
                              const backend::Backend& backend, const std::string& step_times_path) {
  ServeOutcome outcome;
  outcome.spec = spec;
  outcome.origin = stream.origin;
  const mapping::Plan prefill = mapping::compile_prefill_plan(plan);
  serving::StepCosts costs(plan, prefill, plan.workload.seed);
  uint64_t draft_capacity = UINT64_MAX;
  if (experiment.speculative) {
    if (!step_times_path.empty())
      bad_step_times(step_times_path,
                     "measured step times are not taken with workload.speculative (the closed form times the draft "
                     "and the verify pass); leave out --step-times");
    if (!backend.is_closed_form())
      throw CommandError(kExitBadInput, std::string("serve --backend ") + backend.name() +
                                            ": measured step times are not taken with workload.speculative (the "
                                            "closed form times the draft and the verify pass); leave out --backend");
    // The draft on the rows the target's plan leaves, compiled for the serving workload as the target was.
    Experiment served = experiment;
    served.workload = plan.workload;
    const SpeculativeRows rows{plan.hw.grid_height, experiment.hardware.grid_height - plan.hw.grid_height};
    const mapping::Plan draft = compile_draft_plan(served, rows);
    const uint32_t k = experiment.speculative->draft_tokens;
    costs.speculate(mapping::compile_verify_plan(plan, k + 1), draft, *experiment.speculative, plan.workload.seed);
    draft_capacity = draft.max_context_tokens;
    outcome.draft_model = draft.model.name;
    outcome.draft_tokens = k;
    outcome.target_rows = rows.target;
    outcome.draft_rows = rows.draft;
  }
  // The table is the closed form already; a backend that measures scales it to what it measured.
  if (!step_times_path.empty()) {
    const MeasuredSteps measured = read_step_times(step_times_path, experiment, plan, costs.chunk_tokens());
    apply_step_times(step_times_path, measured, experiment, plan, prefill, costs);
    outcome.step_times_origin = measured.origin;
    outcome.step_times_file = step_times_path;
  } else if (!backend.is_closed_form()) {
    const MeasuredSteps measured = measure_step_times(experiment, plan, backend);
    apply_step_times(std::string("serve --backend ") + backend.name(), measured, experiment, plan, prefill, costs);
    outcome.step_times_origin = measured.origin;
  }
  outcome.interpolation_error = costs.interpolation_error();
  outcome.interpolation_samples = costs.samples();
  outcome.chunk_tokens = costs.chunk_tokens();
  outcome.prefill_sram_peak_bytes = prefill.sram_peak_bytes;
  // A sliding-window model never outgrows its tiles: its share is bounded by max_positions per sequence only.
  // With speculation the draft's cache holds the same positions: the smaller of the two bounds.
  const uint64_t placed = std::min(plan.max_context_tokens, draft_capacity);
  const uint64_t capacity = placed == UINT64_MAX ? UINT64_MAX / 4 : placed;
  outcome.run = serving::simulate_serving(outcome.spec, stream, costs, capacity, plan.hw.clock_ghz);
  outcome.metrics = serving::serving_metrics(outcome.spec, outcome.run);
  outcome.model_label = section_label(experiment.config, "model", plan.model.name);
  outcome.hardware_label = section_label(experiment.config, "hardware", plan.hw.name);
  outcome.wafers = plan.hw.wafers;
  return outcome;
}

const char* policy_name(workloads::SchedulerPolicy policy) {
  switch (policy) {
    case workloads::SchedulerPolicy::PrefillFirst: return "prefill_first";
    case workloads::SchedulerPolicy::DecodeFirst: return "decode_first";
    case workloads::SchedulerPolicy::Chunked: return "chunked";
  }
  return "?";
}

const char* transport_name(workloads::TransportKind kind) {
  return kind == workloads::TransportKind::Http ? "http" : "websocket";
}

double tokens_per_step(const serving::ServingCounters& counters) {
  return counters.decode_steps ? double(counters.decode_tokens) / double(counters.decode_steps) : 0.0;
}

namespace {

std::string step_times_text(const ServeOutcome& outcome) {
  if (!outcome.step_times_file.empty())
    return "closed form scaled to " + outcome.step_times_origin + " cycles of " + outcome.step_times_file;
  if (outcome.step_times_origin != kClosedForm)
    return "closed form scaled to " + outcome.step_times_origin + " cycles of the serving plan's workload";
  return kClosedForm;
}

}  // namespace

nlohmann::json serve_json(const Experiment& experiment, const ServeOutcome& outcome) {
  nlohmann::json document = nlohmann::json::object();
  write_serving_figures({experiment, outcome}, document);
  return document;
}

std::string serve_table(const ServeOutcome& outcome) {
  const workloads::ServingSpec& spec = outcome.spec;
  const serving::ServingMetrics& m = outcome.metrics;
  std::string out =
      fmt::format("{} on {} ({} wafer(s)), requests {}, batch up to {}, {} scheduling, {} transport [{}]\n",
                  outcome.model_label, outcome.hardware_label, outcome.wafers, outcome.origin, spec.max_batch,
                  policy_name(spec.policy), transport_name(spec.transport.kind), step_times_text(outcome));
  Table table({{"metric", "", false},
               {"all", "", true},
               {"realtime", "", true},
               {"background", "", true},
               {"unit", "", false}});
  for (std::vector<std::string>& row : serving_rows({&m.overall, &m.classes[0], &m.classes[1]}))
    table.add_row(std::move(row));
  out += table.str();
  const serving::ServingCounters& counters = outcome.run.counters;
  if (!outcome.draft_model.empty())
    out += fmt::format(
        "speculative decoding: draft {} (k = {}) on {} rows beside the target's {}; {} steps emitted {} tokens, "
        "{:.3f} tokens per step\n",
        outcome.draft_model, outcome.draft_tokens, outcome.draft_rows, outcome.target_rows, counters.decode_steps,
        counters.decode_tokens, tokens_per_step(counters));
  out += fmt::format(
      "pipeline occupancy {:.1f} % of {:.3f} s; KV share {} tokens, {} session evictions, {} prompt tokens reused; "
      "step times: {}, {} contexts interpolated (largest error {:.2f} %)\n",
      100 * m.utilization, m.duration_s, outcome.run.kv_capacity_tokens, counters.evictions,
      counters.reused_prefix_tokens, step_times_text(outcome), outcome.interpolation_samples,
      100 * outcome.interpolation_error);
  return out;
}

std::string requests_csv(const ServeOutcome& outcome) {
  std::string out =
      "id,class,session,turn,outcome,sent_s,server_arrival_s,admitted_s,first_token_s,last_token_s,prompt_tokens,"
      "prefilled_tokens,context_tokens,output_tokens,tokens_done,ttft_ms,tpot_ms,e2e_ms,queue_ms,preemptions\n";
  auto time = [](double seconds) { return seconds < 0 ? std::string() : fmt::format("{:.9f}", seconds); };
  for (const serving::RequestRecord& r : outcome.run.requests) {
    const bool done = r.outcome == serving::Outcome::Completed;
    const std::string ttft = done ? fmt::format("{:.6f}", (r.first_token_s - r.sent_s) * 1e3) : "";
    const std::string tpot =
        done && r.output_tokens > 1
            ? fmt::format("{:.6f}", (r.last_token_s - r.first_token_s) * 1e3 / double(r.output_tokens - 1))
            : "";
    const std::string e2e = done ? fmt::format("{:.6f}", (r.last_token_s - r.sent_s) * 1e3) : "";
    const std::string queue = r.admitted_s >= 0 ? fmt::format("{:.6f}", (r.admitted_s - r.server_arrival_s) * 1e3) : "";
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id,
                       workloads::class_name(r.request_class), r.session, r.turn, serving::outcome_name(r.outcome),
                       time(r.sent_s), time(r.server_arrival_s), time(r.admitted_s), done ? time(r.first_token_s) : "",
                       done ? time(r.last_token_s) : "", r.prompt_tokens, r.prefilled_tokens, r.context_tokens,
                       r.output_tokens, r.tokens_done, ttft, tpot, e2e, queue, r.preemptions);
  }
  return out;
}

}  // namespace wafersim::reports
