#include "sim/cli/serve_report.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "mapping/plan.h"
#include "mapping/verify_plan.h"
#include "models/config/text.h"
#include "sim/cli/commands.h"
#include "sim/cli/output.h"
#include "sim/experiment/speculative_placement.h"
#include "sim/experiment/version.h"

namespace wafersim::cli {

using serving::ClassMetrics;
using serving::Distribution;

namespace {

[[noreturn]] void bad_step_times(const std::string& path, const std::string& why) {
  throw CommandError(kExitBadInput, path + ": " + why);
}

// Measured / closed-form cycles of each region, at the context the run measured.
std::vector<double> measured_ratios(const std::string& path, const nlohmann::json& measured,
                                    const std::vector<mapping::Region>& regions, const serving::StepCosts& costs,
                                    serving::ItemKind kind, const char* field, double context) {
  const size_t count = regions.size();
  if (!measured.is_array() || measured.size() != count)
    bad_step_times(path, std::string("has ") + (measured.is_array() ? std::to_string(measured.size()) : "no") + " " +
                             (kind == serving::ItemKind::Decode ? "decode" : "prefill") + " regions; this plan has " +
                             std::to_string(count) + " (another model or mapping?)");
  std::vector<double> ratios;
  for (size_t r = 0; r < count; ++r) {
    const nlohmann::json& row = measured[r];
    if (!row.is_object() || row.value("region", std::string()) != regions[r].name || !row.contains(field) ||
        !row[field].is_number() || !(row[field].get<double>() > 0))
      bad_step_times(path, "region " + std::to_string(r) + " is not " + config::quoted(regions[r].name) +
                               " with a measured " + field + " (another model or mapping?)");
    ratios.push_back(row[field].get<double>() / costs.service_cycles(kind, r, context));
  }
  return ratios;
}

// Scales `costs` to the per-region cycles of a run's --json document; returns
// the backend that measured them ("engine" for run, "analytic").
std::string apply_step_times(const std::string& path, const Experiment& experiment, const mapping::Plan& plan,
                             const mapping::Plan& prefill, serving::StepCosts& costs) {
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
  const nlohmann::json& metrics = run["metrics"];
  const nlohmann::json prefill_run = metrics.value("prefill", nlohmann::json());
  if (!prefill_run.is_object()) bad_step_times(path, "has no prefill; run it with workload.prefill: true");
  const uint64_t chunk_tokens = prefill_run.value("chunk_tokens", uint64_t(0));
  if (chunk_tokens != costs.chunk_tokens())
    bad_step_times(path, "measured prefill chunks of " + std::to_string(chunk_tokens) + " tokens; serve uses " +
                             std::to_string(costs.chunk_tokens()) + " (workload.prefill_chunk_tokens)");
  // The contexts the run measured at, on average: decode token t attends to
  // prompt + t + 1 positions, prefill chunk k to k * size + (size + 1) / 2.
  const double prompt = setup.value("prompt_tokens", 0.0), decode_tokens = setup.value("decode_tokens", 1.0);
  const double chunks = prefill_run.value("chunks", 1.0), size = double(chunk_tokens);
  const double decode_context = prompt + (decode_tokens + 1) / 2;
  const double prefill_context = size * (chunks - 1) / 2 + double((chunk_tokens + 1) / 2);
  const std::vector<double> decode =
      measured_ratios(path, metrics.value("per_layer", nlohmann::json()), plan.regions, costs,
                      serving::ItemKind::Decode, "cycles_per_token", decode_context);
  const std::vector<double> chunk =
      measured_ratios(path, prefill_run.value("per_layer", nlohmann::json()), prefill.regions, costs,
                      serving::ItemKind::Prefill, "cycles_per_chunk", prefill_context);
  costs.scale(serving::ItemKind::Decode, decode);
  costs.scale(serving::ItemKind::Prefill, chunk);
  const std::string backend = run.value("engine", std::string("?"));
  return backend == "sim" ? "engine" : backend;
}

}  // namespace

ServeOutcome serve_experiment(const Experiment& experiment, const mapping::Plan& plan,
                              const workloads::ServingSpec& spec, const workloads::RequestStream& stream,
                              const std::string& step_times_path) {
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
  if (!step_times_path.empty()) {
    outcome.step_times_origin = apply_step_times(step_times_path, experiment, plan, prefill, costs);
    outcome.step_times_file = step_times_path;
  }
  outcome.interpolation_error = costs.interpolation_error();
  outcome.interpolation_samples = costs.samples();
  outcome.chunk_tokens = costs.chunk_tokens();
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

namespace {

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

nlohmann::json distribution_json(const Distribution& d) {
  if (d.count == 0) return {{"mean", nullptr}, {"p50", nullptr}, {"p90", nullptr}, {"p99", nullptr}, {"max", nullptr}};
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

nlohmann::json class_json(const ClassMetrics& m) {
  nlohmann::json per_user =
      m.tokens_per_second_per_user.count == 0
          ? nlohmann::json{{"mean", nullptr}, {"p50", nullptr}}
          : nlohmann::json{{"mean", m.tokens_per_second_per_user.mean}, {"p50", m.tokens_per_second_per_user.p50}};
  return {{"requests",
           {{"offered", m.offered},
            {"completed", m.completed},
            {"rejected",
             {{"total", m.rejected()},
              {"rate_limit", m.rejected_rate_limit},
              {"queue_full", m.rejected_queue_full},
              {"context", m.rejected_context}}},
            {"unfinished", m.unfinished}}},
          {"ttft_ms", distribution_json(m.ttft_ms)},
          {"tpot_ms", distribution_json(m.tpot_ms)},
          {"e2e_ms", distribution_json(m.e2e_ms)},
          {"queue_ms", distribution_json(m.queue_ms)},
          {"output_tokens", m.output_tokens},
          {"tokens_per_second", m.tokens_per_second},
          {"tokens_per_second_per_user", per_user},
          {"goodput_rps", m.goodput_rps},
          {"preemptions", m.preemptions}};
}

std::string step_times_text(const ServeOutcome& outcome) {
  if (outcome.step_times_file.empty()) return "closed form";
  return "closed form scaled to " + outcome.step_times_origin + " cycles of " + outcome.step_times_file;
}

std::string fixed(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

std::string cell(const Distribution& d, double Distribution::*field) { return d.count == 0 ? "—" : fixed(d.*field, 3); }

}  // namespace

nlohmann::json serve_json(const Experiment& experiment, const ServeOutcome& outcome) {
  const workloads::ServingSpec& spec = outcome.spec;
  const serving::ServingMetrics& m = outcome.metrics;
  const serving::ServingCounters& counters = outcome.run.counters;
  nlohmann::json document = class_json(m.overall);
  document["step_times"] = {
      {"origin", outcome.step_times_origin},
      {"file", outcome.step_times_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(outcome.step_times_file)},
      {"samples", outcome.interpolation_samples},
      {"interpolation_error_max", outcome.interpolation_error},
      {"prefill_chunk_tokens", outcome.chunk_tokens}};
  document["utilization"] = m.utilization;
  document["duration_s"] = m.duration_s;
  document["kv_capacity_tokens"] = outcome.run.kv_capacity_tokens;
  document["evictions"] = counters.evictions;
  document["reused_prefix_tokens"] = counters.reused_prefix_tokens;
  document["prefill_chunks"] = counters.prefill_chunks;
  document["decode_tokens"] = counters.decode_tokens;
  if (!outcome.draft_model.empty())
    document["speculative"] = {
        {"draft_model", outcome.draft_model},
        {"draft_tokens", outcome.draft_tokens},
        {"target_rows", outcome.target_rows},
        {"draft_rows", outcome.draft_rows},
        {"decode_steps", counters.decode_steps},
        {"tokens_per_step",
         counters.decode_steps ? double(counters.decode_tokens) / double(counters.decode_steps) : 0.0}};
  nlohmann::json classes = nlohmann::json::object();
  for (size_t c = 0; c < workloads::kRequestClasses; ++c)
    classes[workloads::class_names()[c]] = class_json(m.classes[c]);
  document["classes"] = classes;
  return {{"fits", true},
          {"experiment",
           {{"model", outcome.model_label},
            {"hardware", outcome.hardware_label},
            {"wafers", outcome.wafers},
            {"requests", outcome.origin},
            {"max_batch", spec.max_batch},
            {"policy", policy_name(spec.policy)},
            {"preemption", spec.preemption},
            {"transport", transport_name(spec.transport.kind)}}},
          {"serving", document},
          {"config_hash", experiment.config.hash()},
          {"version", version()}};
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
  const std::array<const ClassMetrics*, 3> columns = {&m.overall, &m.classes[0], &m.classes[1]};
  auto row = [&](const std::string& name, const std::string& unit, auto&& value) {
    std::vector<std::string> cells = {name};
    for (const ClassMetrics* c : columns) cells.push_back(value(*c));
    cells.push_back(unit);
    table.add_row(std::move(cells));
  };
  auto count = [](uint64_t ClassMetrics::*field) {
    return [field](const ClassMetrics& c) { return std::to_string(c.*field); };
  };
  row("requests offered", "requests", count(&ClassMetrics::offered));
  row("requests completed", "requests", count(&ClassMetrics::completed));
  row("rejected: rate limit", "requests", count(&ClassMetrics::rejected_rate_limit));
  row("rejected: queue full", "requests", count(&ClassMetrics::rejected_queue_full));
  row("rejected: context", "requests", count(&ClassMetrics::rejected_context));
  row("requests unfinished", "requests", count(&ClassMetrics::unfinished));
  const std::array<std::pair<const char*, Distribution ClassMetrics::*>, 4> latencies = {
      {{"time to first token", &ClassMetrics::ttft_ms},
       {"time per output token", &ClassMetrics::tpot_ms},
       {"end to end", &ClassMetrics::e2e_ms},
       {"queueing", &ClassMetrics::queue_ms}}};
  const std::array<std::pair<const char*, double Distribution::*>, 4> stats = {{{"mean", &Distribution::mean},
                                                                                {"p50", &Distribution::p50},
                                                                                {"p99", &Distribution::p99},
                                                                                {"max", &Distribution::max}}};
  for (const auto& [name, field] : latencies)
    for (const auto& [stat, member] : stats)
      row(std::string(name) + ", " + stat, "ms",
          [field = field, member = member](const ClassMetrics& c) { return cell(c.*field, member); });
  row("throughput", "tokens/s", [](const ClassMetrics& c) { return fixed(c.tokens_per_second, 1); });
  row("throughput per user, mean", "tokens/s",
      [](const ClassMetrics& c) { return cell(c.tokens_per_second_per_user, &Distribution::mean); });
  row("goodput", "requests/s", [](const ClassMetrics& c) { return fixed(c.goodput_rps, 3); });
  row("preemptions", "requests", count(&ClassMetrics::preemptions));
  out += table.str();
  const serving::ServingCounters& counters = outcome.run.counters;
  if (!outcome.draft_model.empty())
    out += fmt::format(
        "speculative decoding: draft {} (k = {}) on {} rows beside the target's {}; {} steps emitted {} tokens, "
        "{:.3f} tokens per step\n",
        outcome.draft_model, outcome.draft_tokens, outcome.draft_rows, outcome.target_rows, counters.decode_steps,
        counters.decode_tokens,
        counters.decode_steps ? double(counters.decode_tokens) / double(counters.decode_steps) : 0.0);
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

}  // namespace wafersim::cli
