#include "sim/reports/explain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "mapping/does_not_fit.h"
#include "mapping/kv_groups.h"
#include "models/config/error.h"
#include "models/config/value_text.h"
#include "sim/reports/reports.h"

namespace wafersim::reports {

namespace {

// A change smaller than this is "no effect": the closed form is exact, but a
// knob may move a figure by a rounding-sized amount through the layout.
constexpr double kNoEffect = 0.005;
constexpr size_t kKnobsShown = 3;

// The closed form's figures of the experiment with more --set values.
struct WhatIf {
  std::string refusal;  // why the variant does not run (bad value, does not fit); empty when it ran
  double value = 0;     // the objective
  uint32_t wafers = 0, kv_head_copies = 0;
  uint64_t sram_peak_bytes = 0, sram_bytes = 0;
  nlohmann::json metrics;  // the variant's, as analytic gives them
};

WhatIf closed_form(const Experiment& experiment, std::vector<std::string> sets, const std::string& objective) {
  // The objective is a decode figure: the prefill would only cost time, and
  // the functional check computes no timing.
  sets.insert(sets.end(), {"workload.prefill=false", "sim.functional=false"});
  WhatIf out;
  try {
    const Experiment variant = experiment_with(experiment, sets);
    const mapping::Plan plan = compile_plan(variant);
    const Report report = decode_report(variant, plan, "analytic", {}, std::chrono::steady_clock::now());
    out.metrics = report.document.at("metrics");
    out.value = out.metrics.at(objective).get<double>();
    out.wafers = plan.hw.wafers;
    out.kv_head_copies = plan.options.kv_head_copies;
    out.sram_peak_bytes = plan.sram_peak_bytes;
    out.sram_bytes = plan.hw.tile.sram_bytes;
  } catch (const config::ConfigError& error) {
    out.refusal = error.what();
  } catch (const mapping::DoesNotFitError& error) {
    out.refusal = error.what();
  }
  return out;
}

struct Knob {
  std::string set;   // KEY=VALUE
  std::string what;  // in words
};

// The knobs tried: each a change a user could make to this experiment's
// mapping, hardware or workload, and what the result's objective asks for.
std::vector<Knob> candidate_knobs(const Experiment& experiment, const mapping::Plan& plan, bool throughput) {
  const mapping::MappingOptions& options = plan.options;
  std::vector<Knob> knobs;
  knobs.push_back({fmt::format("hardware.wafers={}", plan.hw.wafers + 1), "one more wafer"});
  if (options.reduction == mapping::Reduction::KTree) {
    knobs.push_back({fmt::format("mapping.ktree_levels={}", options.ktree_levels + 1), "one more K-tree level"});
    if (options.ktree_levels > 1)
      knobs.push_back({fmt::format("mapping.ktree_levels={}", options.ktree_levels - 1), "one K-tree level fewer"});
    knobs.push_back({"mapping.reduction=tree", "store-and-forward fan-in trees instead of streamed K-trees"});
  } else {
    knobs.push_back({"mapping.reduction=ktree", "streamed K-trees instead of fan-in trees"});
  }
  if (options.dataflow == mapping::Dataflow::Distributed && options.attention == mapping::AttentionLayout::Groups) {
    knobs.push_back({"mapping.attention=grid", "grid attention instead of per-group columns"});
    const workloads::ModelSpec& m = plan.model;
    const uint32_t copies = options.kv_head_copies;
    if (copies > 1) knobs.push_back({"mapping.kv_head_copies=1", "one copy of each KV head's cache"});
    if (m.n_kv_heads > 0 && mapping::kv_head_copies(m.n_kv_heads, m.n_heads, UINT32_MAX, 2 * copies) == 2 * copies)
      knobs.push_back({fmt::format("mapping.kv_head_copies={}", 2 * copies), "twice the copies of each KV head"});
  }
  if (throughput)
    knobs.push_back({fmt::format("workload.batch={}", 2 * experiment.workload.batch), "twice the sequences"});
  return knobs;
}

double effect(double value, double base) { return base > 0 ? value / base - 1 : 0; }

std::string bytes_share(uint64_t used, uint64_t of) { return fmt::format("{:.0f} %", 100.0 * double(used) / of); }

// What stayed and what moved between the plan with the preset's value and this one: the reason a
// parameter changes nothing, read off the two plans.
std::string unchanged_because(const WhatIf& with_preset, const WhatIf& base) {
  std::vector<std::string> same, moved;
  if (with_preset.wafers == base.wafers)
    same.push_back(fmt::format("{} wafer(s)", base.wafers));
  else
    moved.push_back(fmt::format("wafers {} -> {}", with_preset.wafers, base.wafers));
  if (with_preset.kv_head_copies == base.kv_head_copies)
    same.push_back(fmt::format("{} KV-head copies", base.kv_head_copies));
  else
    moved.push_back(fmt::format("KV-head copies {} -> {}", with_preset.kv_head_copies, base.kv_head_copies));
  if (with_preset.sram_peak_bytes * base.sram_bytes != base.sram_peak_bytes * with_preset.sram_bytes)
    moved.push_back(fmt::format("the fullest tile's SRAM {} -> {}",
                                bytes_share(with_preset.sram_peak_bytes, with_preset.sram_bytes),
                                bytes_share(base.sram_peak_bytes, base.sram_bytes)));
  std::string text;
  for (size_t i = 0; i < same.size(); ++i) text += (i ? ", " : "the same ") + same[i];
  if (!moved.empty()) {
    text += text.empty() ? "" : "; ";
    for (size_t i = 0; i < moved.size(); ++i) text += (i ? ", " : "") + moved[i];
    text += ", but not the critical path";
  } else {
    text += " and the same critical path";
  }
  return text;
}

// The critical path's largest category (of the result explained) and the step
// kind that takes the most of a token's step cycles (the closed form's: the
// engine times regions, not steps).
nlohmann::json latency_binding(const nlohmann::json& metrics, const nlohmann::json& closed_form_metrics) {
  std::string category;
  double share = -1;
  for (const auto& [name, value] : metrics.at("breakdown").items())
    if (value.get<double>() > share) share = value.get<double>(), category = name;
  std::map<std::string, double> by_step;
  double total = 0;
  for (const nlohmann::json& row : closed_form_metrics.at("steps_per_region")) {
    by_step[row.at("step").get<std::string>()] += row.at("cycles").get<double>();
    total += row.at("cycles").get<double>();
  }
  auto top = std::max_element(by_step.begin(), by_step.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  nlohmann::json out = {{"category", category}, {"share", share}};
  if (top != by_step.end() && total > 0) out["step"] = {{"name", top->first}, {"share", top->second / total}};
  return out;
}

// Latency-bound (the pipeline holds more tokens than the batch puts in it)
// or pipeline-bound (the slowest region is busy with a token at all times).
nlohmann::json throughput_binding(const nlohmann::json& metrics, double clock_ghz, uint32_t batch) {
  const double latency_cycles = metrics.at("per_token_latency_us").at("mean").get<double>() * clock_ghz * 1e3;
  std::string slowest;
  double slowest_cycles = 0;
  for (const nlohmann::json& row : metrics.at("per_layer"))
    if (row.at("cycles_per_token").get<double>() > slowest_cycles)
      slowest_cycles = row.at("cycles_per_token").get<double>(), slowest = row.at("region").get<std::string>();
  const double in_flight = slowest_cycles > 0 ? latency_cycles / slowest_cycles : 0;
  return {{"bound", batch < in_flight ? "latency" : "pipeline"},
          {"tokens_in_flight", in_flight},
          {"batch", batch},
          {"slowest_region", slowest},
          {"slowest_region_cycles", slowest_cycles}};
}

// The prefill region that takes a chunk longest (it paces the prefill's
// pipeline: a chunk enters a region once the one before has left it) and its
// step that takes the most of that region's step cycles; null without a prefill.
nlohmann::json prefill_binding(const nlohmann::json& metrics) {
  if (!metrics.contains("prefill")) return nullptr;
  const nlohmann::json& prefill = metrics.at("prefill");
  std::string slowest;
  double slowest_cycles = -1;
  for (const nlohmann::json& row : prefill.at("per_layer"))
    if (row.at("cycles_per_chunk").get<double>() > slowest_cycles)
      slowest_cycles = row.at("cycles_per_chunk").get<double>(), slowest = row.at("region").get<std::string>();
  nlohmann::json out = {{"slowest_region", slowest},
                        {"slowest_region_cycles", slowest_cycles},
                        {"chunk_tokens", prefill.at("chunk_tokens")},
                        {"chunks", prefill.at("chunks")}};
  std::string step;
  double step_cycles = -1, total = 0;
  for (const nlohmann::json& row : prefill.at("steps_per_region")) {
    if (row.at("region") != slowest) continue;
    const double cycles = row.at("cycles").get<double>();
    total += cycles;
    if (cycles > step_cycles) step_cycles = cycles, step = row.at("step").get<std::string>();
  }
  if (total > 0) out["step"] = {{"name", step}, {"share", step_cycles / total}};
  return out;
}

}  // namespace

nlohmann::json explain_decode(const Experiment& experiment, const mapping::Plan& plan, const nlohmann::json& document,
                              const std::function<void(const std::string&)>& progress) {
  const nlohmann::json& metrics = document.at("metrics");
  const bool throughput = experiment.workload.batch > 1;
  const std::string objective = throughput ? "tokens_per_second" : "tokens_per_second_per_user";
  const std::vector<Knob> knobs = candidate_knobs(experiment, plan, throughput);
  const std::vector<PresetChange> changes = preset_changes(experiment.config, "hardware");
  const size_t runs = 1 + knobs.size() + changes.size();
  size_t done = 0;
  auto step = [&] {
    if (progress) progress(fmt::format("explain: {}/{} closed-form what-ifs", ++done, runs));
  };

  const WhatIf base = closed_form(experiment, {}, objective);
  step();
  if (!base.refusal.empty()) throw std::logic_error("explain: the experiment itself was refused: " + base.refusal);
  nlohmann::json out = {{"objective", objective},
                        {"closed_form_value", base.value},
                        {"latency", latency_binding(metrics, base.metrics)},
                        {"throughput", throughput_binding(metrics, plan.hw.clock_ghz, experiment.workload.batch)}};
  const nlohmann::json prefill = prefill_binding(metrics);
  if (!prefill.is_null()) out["prefill"] = prefill;

  nlohmann::json tried = nlohmann::json::array();
  for (const Knob& knob : knobs) {
    const WhatIf result = closed_form(experiment, {knob.set}, objective);
    step();
    nlohmann::json row = {{"set", knob.set}, {"what", knob.what}};
    if (result.refusal.empty()) {
      row["value"] = result.value;
      row["effect"] = effect(result.value, base.value);
      row["wafers"] = result.wafers;
    } else {
      row["refused"] = result.refusal;
    }
    tried.push_back(row);
  }
  // Most helpful first; refused knobs last, in the order tried.
  std::stable_sort(tried.begin(), tried.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("effect", -HUGE_VAL) > b.value("effect", -HUGE_VAL);
  });
  out["knobs"] = tried;

  nlohmann::json no_effect = nlohmann::json::array();
  for (const PresetChange& change : changes) {
    const std::string preset_text = config::value_text(change.preset_value);
    const WhatIf with_preset = closed_form(experiment, {change.path + "=" + preset_text}, objective);
    step();
    if (!with_preset.refusal.empty() || std::abs(effect(base.value, with_preset.value)) >= kNoEffect) continue;
    no_effect.push_back({{"key", change.path},
                         {"value", config::value_text(change.value)},
                         {"preset_value", preset_text},
                         {"why", unchanged_because(with_preset, base)}});
  }
  out["no_effect"] = no_effect;
  return out;
}

std::string explain_table(const nlohmann::json& explain) {
  const std::string unit = explain.at("objective") == "tokens_per_second" ? "tokens/s" : "tokens/s per user";
  std::string text = "why (closed-form what-ifs, --explain)\n";
  const nlohmann::json& latency = explain.at("latency");
  text += fmt::format("  latency      {} takes {:.0f} % of the critical path",
                      latency.at("category").get<std::string>(), 100 * latency.at("share").get<double>());
  if (latency.contains("step"))
    text += fmt::format("; {} steps take {:.0f} % of a token's step cycles",
                        latency.at("step").at("name").get<std::string>(),
                        100 * latency.at("step").at("share").get<double>());
  text += "\n";
  const nlohmann::json& throughput = explain.at("throughput");
  const double in_flight = throughput.at("tokens_in_flight").get<double>();
  if (throughput.at("bound") == "latency")
    text += fmt::format(
        "  throughput   latency-bound: the pipeline could hold about {:.0f} tokens at once (its slowest region, {}, "
        "is busy {:.0f} cycles per token); batch {} fills {:.1f} % of it, so more sequences raise throughput\n",
        in_flight, throughput.at("slowest_region").get<std::string>(),
        throughput.at("slowest_region_cycles").get<double>(), throughput.at("batch").get<uint32_t>(),
        100.0 * throughput.at("batch").get<uint32_t>() / in_flight);
  else
    text += fmt::format(
        "  throughput   pipeline-bound: its slowest region, {}, is busy {:.0f} cycles per token and batch {} keeps "
        "it busy (the pipeline holds about {:.0f} tokens)\n",
        throughput.at("slowest_region").get<std::string>(), throughput.at("slowest_region_cycles").get<double>(),
        throughput.at("batch").get<uint32_t>(), in_flight);
  if (explain.contains("prefill")) {
    const nlohmann::json& prefill = explain.at("prefill");
    text +=
        fmt::format("  prefill      its slowest region, {}, is busy {:.0f} cycles per chunk of {} tokens ({} chunks)",
                    prefill.at("slowest_region").get<std::string>(), prefill.at("slowest_region_cycles").get<double>(),
                    prefill.at("chunk_tokens").get<uint64_t>(), prefill.at("chunks").get<uint64_t>());
    if (prefill.contains("step"))
      text += fmt::format("; its {} step takes {:.0f} % of that region's step cycles",
                          prefill.at("step").at("name").get<std::string>(),
                          100 * prefill.at("step").at("share").get<double>());
    text += "\n";
  }
  const nlohmann::json& knobs = explain.at("knobs");
  if (!knobs.empty() && knobs.front().value("effect", -HUGE_VAL) < kNoEffect)
    text += fmt::format("  knobs        none of the {} tried raises {}; the nearest:\n", knobs.size(), unit);
  size_t shown = 0;
  for (const nlohmann::json& knob : knobs) {
    if (shown++ == kKnobsShown) break;
    if (knob.contains("refused")) {
      text += fmt::format("  knob         {:<32} refused: {}\n", knob.at("set").get<std::string>(),
                          knob.at("refused").get<std::string>());
      continue;
    }
    const double change = knob.at("effect").get<double>();
    text += fmt::format("  knob         {:<32} {:+6.1f} %  ({:.0f} {}; {}{})\n", knob.at("set").get<std::string>(),
                        100 * change, knob.at("value").get<double>(), unit, knob.at("what").get<std::string>(),
                        std::abs(change) < kNoEffect ? ": no effect" : "");
  }
  for (const nlohmann::json& item : explain.at("no_effect"))
    text += fmt::format("  no effect    {}={} (preset {}): {}\n", item.at("key").get<std::string>(),
                        item.at("value").get<std::string>(), item.at("preset_value").get<std::string>(),
                        item.at("why").get<std::string>());
  return text;
}

}  // namespace wafersim::reports
