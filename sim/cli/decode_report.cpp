#include "sim/cli/decode_report.h"

#include <fmt/format.h>

#include "sim/cli/output.h"
#include "sim/experiment/version.h"

namespace wafersim::cli {

namespace {

nlohmann::json mean_peak(double mean, double peak) { return {{"mean", mean}, {"peak", peak}}; }

}  // namespace

nlohmann::json decode_json(const Experiment& experiment, const mapping::Plan& plan,
                           const DecodeMetrics& metrics, const backend::RunFigures& figures) {
  nlohmann::json breakdown = nlohmann::json::object();
  for (size_t c = 0; c < metrics.breakdown.size(); ++c)
    breakdown[category_name(Category(c))] = metrics.breakdown[c];
  nlohmann::json per_layer = nlohmann::json::array();
  for (const LayerCycles& layer : metrics.per_layer)
    per_layer.push_back({{"region", layer.name}, {"cycles_per_token", layer.cycles_per_token}});
  const LatencySummary& latency = metrics.per_token_latency_us;
  nlohmann::json document = {
      {"engine", figures.backend},
      {"experiment",
       {{"model", plan.model.name},
        {"hardware", plan.hw.name},
        {"wafers", plan.hw.wafers},
        {"batch", plan.workload.batch},
        {"prompt_tokens", plan.workload.prompt_tokens},
        {"decode_tokens", plan.workload.decode_tokens},
        {"contention", experiment.sim.contention},
        {"clock_ghz", plan.hw.clock_ghz}}},
      {"metrics",
       {{"tokens", metrics.tokens},
        {"total_cycles", metrics.total_cycles},
        {"tokens_per_second", metrics.tokens_per_second},
        {"tokens_per_second_per_user", metrics.tokens_per_second_per_user},
        {"per_token_latency_us",
         {{"mean", latency.mean}, {"p50", latency.p50}, {"p99", latency.p99}, {"max", latency.max}}},
        {"cycles_per_token", metrics.cycles_per_token},
        {"breakdown", breakdown},
        {"per_layer", per_layer}}},
      {"utilization",
       {{"compute", mean_peak(figures.compute_busy_mean, figures.compute_busy_peak)},
        {"sram_capacity", mean_peak(double(plan.sram_mean_bytes) / double(plan.hw.tile.sram_bytes),
                                    double(plan.sram_peak_bytes) / double(plan.hw.tile.sram_bytes))},
        {"links", mean_peak(figures.link_busy_mean, figures.link_busy_peak)}}},
      {"sim",
       {{"tiles_simulated", figures.tiles_simulated},
        {"events", figures.events},
        {"link_hops", figures.link_hops},
        {"events_per_second", figures.wall_seconds > 0 ? double(figures.events) / figures.wall_seconds : 0},
        {"wall_seconds", figures.wall_seconds},
        {"peak_rss_bytes", figures.peak_rss_bytes}}},
      {"config_hash", experiment.config.hash()},
      {"version", version()}};
  for (const backend::StepCycles& step : figures.first_token_steps)
    document["metrics"]["steps"][step.region].push_back({{"step", step.step}, {"cycles", step.cycles}});
  return document;
}

std::string decode_table(const mapping::Plan& plan, const DecodeMetrics& metrics, const backend::RunFigures& figures) {
  std::string out = fmt::format("{} on {} ({} wafer(s)), batch {}, prompt {} tokens, {} decoded tokens per sequence [{}]\n",
                                plan.model.name, plan.hw.name, plan.hw.wafers, plan.workload.batch,
                                plan.workload.prompt_tokens, plan.workload.decode_tokens, figures.backend);
  Table table({{"metric", "", false}, {"value", "", true}, {"unit", "", false}});
  const LatencySummary& latency = metrics.per_token_latency_us;
  table.add_row({"throughput", fmt::format("{:.1f}", metrics.tokens_per_second), "tokens/s (all sequences)"});
  table.add_row({"throughput per user", fmt::format("{:.1f}", metrics.tokens_per_second_per_user), "tokens/s"});
  table.add_row({"per-token latency, mean", fmt::format("{:.3f}", latency.mean), "us"});
  table.add_row({"per-token latency, p50", fmt::format("{:.3f}", latency.p50), "us"});
  table.add_row({"per-token latency, p99", fmt::format("{:.3f}", latency.p99), "us"});
  table.add_row({"per-token latency, max", fmt::format("{:.3f}", latency.max), "us"});
  table.add_row({"cycles per token", fmt::format("{:.0f}", metrics.cycles_per_token), "cycles"});
  table.add_row({"total", std::to_string(metrics.total_cycles), "cycles"});
  for (size_t c = 0; c < metrics.breakdown.size(); ++c)
    table.add_row({std::string("critical path: ") + category_name(Category(c)),
                   fmt::format("{:.1f}", 100 * metrics.breakdown[c]), "%"});
  table.add_row({"compute utilisation, mean", fmt::format("{:.2f}", 100 * figures.compute_busy_mean), "%"});
  table.add_row({"SRAM capacity used, mean", fmt::format("{:.1f}", 100.0 * double(plan.sram_mean_bytes) / double(plan.hw.tile.sram_bytes)), "%"});
  if (figures.measured) {
    table.add_row({"tiles simulated", std::to_string(figures.tiles_simulated), "tiles"});
    table.add_row({"events", std::to_string(figures.events), "events"});
    table.add_row({"wall time", fmt::format("{:.2f}", figures.wall_seconds), "s"});
    table.add_row({"wall time per token", fmt::format("{:.3f}", figures.wall_seconds / double(std::max<uint64_t>(metrics.tokens, 1))), "s"});
    table.add_row({"peak memory", fmt::format("{:.0f}", double(figures.peak_rss_bytes) / 1e6), "MB"});
  }
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
