#include "sim/reports/serve_explain.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/config/error.h"

namespace wafersim::reports {

namespace {

// A limit that held admission back for less than this share of the run is not named as binding.
constexpr double kBindingShare = 0.1;
// The pipeline binds when its busiest region root is busy this share of the run.
constexpr double kBusyPipeline = 0.9;
// A limit binds when raising it raises completed requests or goodput by this share.
constexpr double kHelps = 0.02;

double share(double cycles, double of) { return of > 0 ? cycles / of : 0; }

nlohmann::json class_losses(const ServeOutcome& outcome) {
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c = 0; c < workloads::kRequestClasses; ++c) {
    const serving::ClassMetrics& m = outcome.metrics.classes[c];
    if (m.offered == 0) continue;
    const workloads::ClassSpec& spec = outcome.spec.classes[c];
    classes.push_back({{"class", workloads::class_names()[c]},
                       {"offered", m.offered},
                       {"completed", m.completed},
                       {"rejected_queue_full", m.rejected_queue_full},
                       {"queue_limit", spec.queue_limit},
                       {"rejected_rate_limit", m.rejected_rate_limit},
                       {"rejected_context", m.rejected_context},
                       {"preemptions", m.preemptions},
                       {"priority", spec.priority}});
  }
  return classes;
}

// Mean milliseconds per item: waiting ready outside the pipeline (its turn at
// the entry, or paused), and inside it (entry to the LM head).
nlohmann::json item_times(double wait_cycles, double pipeline_cycles, uint64_t items, double clock_hz) {
  const double per_item_ms = items > 0 ? 1e3 / (clock_hz * double(items)) : 0;
  return {
      {"items", items}, {"waiting_ms", wait_cycles * per_item_ms}, {"in_pipeline_ms", pipeline_cycles * per_item_ms}};
}

bool helps(const nlohmann::json& what_if) {
  if (what_if.contains("refused")) return false;
  auto gain = [&](const char* key) {
    const double before = what_if.at(key)[0].get<double>(), after = what_if.at(key)[1].get<double>();
    return before > 0 ? after / before - 1 : (after > 0 ? 1.0 : 0.0);
  };
  return gain("completed") >= kHelps || gain("goodput_rps") >= kHelps;
}

// What binds, from the counters and the what-if: the batch limit when queued
// requests waited for a slot a tenth of the run or more and doubling it helps;
// when it does not help, the pipeline's entry (items wait their turn); the KV
// share when it kept requests out that long; else a busy pipeline, else a
// rate limit that rejected requests, else nothing.
std::string binding_limit(const nlohmann::json& explain, const ServeOutcome& outcome) {
  const double max_batch = explain.at("admission_blocked").at("max_batch").get<double>();
  const double kv_share = explain.at("admission_blocked").at("kv_share").get<double>();
  if (kv_share >= kBindingShare && kv_share > max_batch) return "kv_share";
  if (max_batch >= kBindingShare) return helps(explain.at("what_if")) ? "max_batch" : "entry";
  if (outcome.metrics.utilization >= kBusyPipeline) return "pipeline";
  if (outcome.metrics.overall.rejected_rate_limit > 0) return "rate_limit";
  return "none";
}

nlohmann::json batch_what_if(const Experiment& experiment, const ServeOutcome& outcome, const ServeRerun& rerun) {
  const std::string set = fmt::format("serving.scheduler.max_batch={}", 2 * outcome.spec.max_batch);
  nlohmann::json out = {{"set", set}};
  try {
    const Experiment variant = experiment_with(experiment, {set});
    const ServeOutcome doubled = rerun(variant);
    const serving::ClassMetrics &before = outcome.metrics.overall, &after = doubled.metrics.overall;
    out["completed"] = {before.completed, after.completed};
    out["rejected"] = {before.rejected(), after.rejected()};
    out["goodput_rps"] = {before.goodput_rps, after.goodput_rps};
    out["tokens_per_second"] = {before.tokens_per_second, after.tokens_per_second};
    out["pipeline_busy"] = {outcome.metrics.utilization, doubled.metrics.utilization};
  } catch (const config::ConfigError& error) {
    out["refused"] = error.what();
  }
  return out;
}

}  // namespace

nlohmann::json explain_serving(const Experiment& experiment, const ServeOutcome& outcome, const ServeRerun& rerun) {
  const serving::ServingCounters& counters = outcome.run.counters;
  const double run_cycles = counters.end_cycles;
  nlohmann::json out = {
      {"duration_s", outcome.metrics.duration_s},
      {"pipeline_busy", outcome.metrics.utilization},
      {"max_batch", outcome.spec.max_batch},
      {"mean_batch", share(counters.batch_size_cycles, run_cycles)},
      {"kv_share_tokens", outcome.run.kv_capacity_tokens},
      {"admission_blocked",
       {{"max_batch", share(counters.blocked_by_max_batch_cycles, run_cycles)},
        {"kv_share", share(counters.blocked_by_kv_cycles, run_cycles)}}},
      {"decode_token", item_times(counters.decode_entry_wait_cycles, counters.decode_pipeline_cycles,
                                  counters.decode_steps, outcome.run.clock_hz)},
      {"prefill_chunk", item_times(counters.prefill_entry_wait_cycles, counters.prefill_pipeline_cycles,
                                   counters.prefill_chunks, outcome.run.clock_hz)},
      {"classes", class_losses(outcome)}};
  out["what_if"] = batch_what_if(experiment, outcome, rerun);
  out["binding"] = binding_limit(out, outcome);
  return out;
}

std::string serve_explain_table(const nlohmann::json& explain) {
  std::string text = "why (serve --explain)\n";
  const double busy = 100 * explain.at("pipeline_busy").get<double>();
  const double by_batch = 100 * explain.at("admission_blocked").at("max_batch").get<double>();
  const double by_kv = 100 * explain.at("admission_blocked").at("kv_share").get<double>();
  const std::string binding = explain.at("binding");
  const std::string held = fmt::format(
      "a queued request could not join the batch for {:.1f} % of the run because it was full (mean batch {:.1f} of "
      "{}) and for {:.1f} % because the KV share ({} tokens) could not hold it; the busiest region root was busy "
      "{:.1f} %",
      by_batch, explain.at("mean_batch").get<double>(), explain.at("max_batch").get<uint32_t>(), by_kv,
      explain.at("kv_share_tokens").get<uint64_t>(), busy);
  const nlohmann::json &decode = explain.at("decode_token"), &prefill = explain.at("prefill_chunk");
  const std::string waits = fmt::format(
      "a decode step waited {:.3f} ms on average to enter the pipeline and took {:.3f} ms in it; a prefill chunk "
      "waited {:.3f} ms and took {:.3f} ms",
      decode.at("waiting_ms").get<double>(), decode.at("in_pipeline_ms").get<double>(),
      prefill.at("waiting_ms").get<double>(), prefill.at("in_pipeline_ms").get<double>());
  if (binding == "max_batch")
    text += "  binding      serving.scheduler.max_batch, not the wafer: " + held + "\n";
  else if (binding == "entry")
    text +=
        "  binding      the pipeline's entry, not serving.scheduler.max_batch (doubling it does not help): " + waits +
        "; " + held + "\n";
  else if (binding == "kv_share")
    text += "  binding      the KV share, not the wafer: " + held + "\n";
  else if (binding == "pipeline")
    text += "  binding      the pipeline (the wafer): " + held + "\n";
  else if (binding == "rate_limit")
    text += "  binding      the classes' rate limits: " + held + "\n";
  else
    text += "  binding      none: the offered load is served; " + held + "\n";
  if (binding != "entry") text += "  steps        " + waits + "\n";
  for (const nlohmann::json& c : explain.at("classes")) {
    std::vector<std::string> lost;
    if (c.at("rejected_queue_full").get<uint64_t>() > 0)
      lost.push_back(fmt::format("{} rejected with its queue full (serving.{}.queue_limit {})",
                                 c.at("rejected_queue_full").get<uint64_t>(), c.at("class").get<std::string>(),
                                 c.at("queue_limit").get<uint64_t>()));
    if (c.at("rejected_rate_limit").get<uint64_t>() > 0)
      lost.push_back(fmt::format("{} by its rate limit", c.at("rejected_rate_limit").get<uint64_t>()));
    if (c.at("rejected_context").get<uint64_t>() > 0)
      lost.push_back(fmt::format("{} longer than the KV share", c.at("rejected_context").get<uint64_t>()));
    if (c.at("preemptions").get<uint64_t>() > 0)
      lost.push_back(fmt::format("preempted {} times by a class of higher priority (its priority {})",
                                 c.at("preemptions").get<uint64_t>(), c.at("priority").get<int64_t>()));
    if (lost.empty()) continue;
    std::string line;
    for (size_t i = 0; i < lost.size(); ++i) line += (i ? "; " : "") + lost[i];
    text += fmt::format("  {:<12} {}\n", c.at("class").get<std::string>(), line);
  }
  const nlohmann::json& what_if = explain.at("what_if");
  if (what_if.contains("refused")) {
    text += fmt::format("  what-if      {}: refused: {}\n", what_if.at("set").get<std::string>(),
                        what_if.at("refused").get<std::string>());
  } else {
    text += fmt::format(
        "  what-if      {}: completed {} -> {}, rejected {} -> {}, goodput {:.2f} -> {:.2f} requests/s, busiest root "
        "{:.1f} % -> {:.1f} %\n",
        what_if.at("set").get<std::string>(), what_if.at("completed")[0].get<uint64_t>(),
        what_if.at("completed")[1].get<uint64_t>(), what_if.at("rejected")[0].get<uint64_t>(),
        what_if.at("rejected")[1].get<uint64_t>(), what_if.at("goodput_rps")[0].get<double>(),
        what_if.at("goodput_rps")[1].get<double>(), 100 * what_if.at("pipeline_busy")[0].get<double>(),
        100 * what_if.at("pipeline_busy")[1].get<double>());
  }
  return text;
}

}  // namespace wafersim::reports
