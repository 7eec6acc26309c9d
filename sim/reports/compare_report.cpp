#include "sim/reports/compare_report.h"

#include <memory>

#include <fmt/format.h>

#include "mapping/does_not_fit.h"
#include "sim/reports/decode_run.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

namespace {

constexpr const char* kReferenceNote =
    "the GPU column is a closed-form reference (HBM and compute roofline, NVLink all-reduces, a fixed cost per "
    "layer; docs/GPU_REFERENCE.md), not a GPU simulation";

std::string number(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

// power_w is what the side draws while it decodes: the wafer's energy model
// (its average power over the decode), the GPUs' TDP; rated_power_w its rating.
struct Side {
  double tokens_per_s_per_user = 0, tokens_per_s = 0, per_token_latency_us = 0;
  double power_w = 0, joules_per_token = 0;
  std::optional<double> ttft_ms, rated_power_w;
};

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json side_json(const Side& s) {
  nlohmann::json j;
  j["tokens_per_s_per_user"] = s.tokens_per_s_per_user;
  j["tokens_per_s"] = s.tokens_per_s;
  j["per_token_latency_us"] = s.per_token_latency_us;
  j["time_to_first_token_ms"] = optional_json(s.ttft_ms);
  j["power_w"] = s.power_w;
  j["rated_power_w"] = optional_json(s.rated_power_w);
  j["tokens_per_s_per_kw"] = s.power_w > 0 ? nlohmann::json(s.tokens_per_s / (s.power_w / 1e3)) : nlohmann::json();
  j["joules_per_token"] = s.joules_per_token;
  return j;
}

}  // namespace

gpu_reference::Result gpu_reference_of(const Experiment& experiment, const GpuSystem& system) {
  try {
    return gpu_reference::evaluate(experiment.model, experiment.workload, system);
  } catch (const gpu_reference::DoesNotFitError& error) {
    throw mapping::DoesNotFitError(std::string("GPU reference: ") + error.what());
  }
}

Report compare_report(const Experiment& experiment, const mapping::Plan& plan, const gpu_reference::Result& gpu,
                      const backend::ProgressFn& progress) {
  const std::unique_ptr<backend::Backend> analytic = backend::make_backend("analytic");
  const DecodeRun run = run_decode(experiment, plan, *analytic, experiment.sim, progress);
  const DecodeMetrics& m = run.metrics;

  Side wafer;
  wafer.tokens_per_s_per_user = m.tokens_per_second_per_user;
  wafer.tokens_per_s = m.tokens_per_second;
  wafer.per_token_latency_us = m.per_token_latency_us.mean;
  if (m.prefill) wafer.ttft_ms = m.prefill->time_to_first_token_us.mean / 1e3;
  wafer.power_w = m.energy.average_power_watts;
  wafer.joules_per_token = m.energy.joules_per_token;
  if (m.energy.rated_power_watts > 0) wafer.rated_power_w = m.energy.rated_power_watts;

  Side g;
  g.tokens_per_s_per_user = gpu.tokens_per_second_per_user;
  g.tokens_per_s = gpu.tokens_per_second;
  g.per_token_latency_us = gpu.decode.total_us;
  if (gpu.has_prefill) g.ttft_ms = gpu.time_to_first_token_us / 1e3;
  g.power_w = gpu.power_watts;
  g.rated_power_w = gpu.power_watts;
  g.joules_per_token = gpu.joules_per_token;

  const std::string wafer_name = fmt::format("{} x{}", plan.hw.name, plan.hw.wafers);
  Table table({{"figure", "", false}, {"wafer: " + wafer_name, "", true}, {"gpu: " + gpu.system, "", true}});
  auto optional_cell = [](const std::optional<double>& v, int decimals) {
    return v ? number(*v, decimals) : std::string("n/a");
  };
  auto per_kw = [](const Side& s) {
    return s.power_w > 0 ? number(s.tokens_per_s / (s.power_w / 1e3), 1) : std::string("n/a");
  };
  auto kw = [&](const std::optional<double>& watts) { return optional_cell(watts ? *watts / 1e3 : watts, 1); };
  table.add_row({"tokens_per_s_per_user", number(wafer.tokens_per_s_per_user, 1), number(g.tokens_per_s_per_user, 1)});
  table.add_row({"tokens_per_s (all users)", number(wafer.tokens_per_s, 1), number(g.tokens_per_s, 1)});
  table.add_row({"per_token_latency_us", number(wafer.per_token_latency_us, 2), number(g.per_token_latency_us, 2)});
  table.add_row({"time_to_first_token_ms", optional_cell(wafer.ttft_ms, 3), optional_cell(g.ttft_ms, 3)});
  table.add_row({"power_kw", number(wafer.power_w / 1e3, 1), number(g.power_w / 1e3, 1)});
  table.add_row({"rated_power_kw", kw(wafer.rated_power_w), kw(g.rated_power_w)});
  table.add_row({"tokens_per_s_per_kw", per_kw(wafer), per_kw(g)});
  table.add_row({"joules_per_token_j", number(wafer.joules_per_token, 3), number(g.joules_per_token, 3)});

  Table steps({{"gpu decode step, per token", "", false}, {"value", "", true}});
  steps.add_row({"hbm_read_us (weights/" + std::to_string(gpu.gpus) + ", KV/" + std::to_string(gpu.kv_shards) + ")",
                 number(gpu.decode.memory_us, 2)});
  steps.add_row({"compute_us", number(gpu.decode.compute_us, 2)});
  steps.add_row({"all_reduce_us (2 per layer)", number(gpu.decode.all_reduce_us, 2)});
  steps.add_row({"layer_overhead_us", number(gpu.decode.overhead_us, 2)});
  steps.add_row({"bound", gpu.decode_bound});

  std::string out = fmt::format(
      "{} on {} ({} wafer(s)) against {} ({} GPU(s), tensor parallel), batch {}, prompt {} tokens, {} decoded "
      "tokens per sequence [analytic | gpu reference]\n",
      section_label(experiment.config, "model", plan.model.name),
      section_label(experiment.config, "hardware", plan.hw.name), plan.hw.wafers, gpu.system, gpu.gpus,
      plan.workload.batch, plan.workload.prompt_tokens, plan.workload.decode_tokens);
  out += table.str() + "\n" + steps.str();
  out +=
      "power and energy: wafer = the energy model's average over the decode (per-event energies and static power, "
      "docs/ENERGY.md), beside its systems' rating (hardware.energy.rated_power_watts); gpu = TDP x GPUs for the "
      "whole run (hosts and switches excluded)\n";
  if (experiment.speculative) out += "note: the wafer decodes speculatively; the GPU reference decodes plainly\n";
  out += std::string("note: ") + kReferenceNote + "\n";

  nlohmann::json document;
  document["model"] = plan.model.name;
  document["workload"] = {{"batch", plan.workload.batch},
                          {"prompt_tokens", plan.workload.prompt_tokens},
                          {"decode_tokens", plan.workload.decode_tokens},
                          {"prefill", plan.workload.prefill}};
  document["wafer"] = side_json(wafer);
  document["wafer"]["hardware"] = plan.hw.name;
  document["wafer"]["wafers"] = plan.hw.wafers;
  document["wafer"]["backend"] = "analytic";
  document["gpu"] = side_json(g);
  document["gpu"]["system"] = gpu.system;
  document["gpu"]["gpus"] = gpu.gpus;
  document["gpu"]["decode_step_us"] = {{"hbm_read", gpu.decode.memory_us},
                                       {"compute", gpu.decode.compute_us},
                                       {"all_reduce", gpu.decode.all_reduce_us},
                                       {"layer_overhead", gpu.decode.overhead_us},
                                       {"total", gpu.decode.total_us}};
  if (gpu.has_prefill)
    document["gpu"]["prefill_us"] = {{"hbm_read", gpu.prefill.memory_us},
                                     {"compute", gpu.prefill.compute_us},
                                     {"all_reduce", gpu.prefill.all_reduce_us},
                                     {"layer_overhead", gpu.prefill.overhead_us},
                                     {"total", gpu.prefill.total_us}};
  document["gpu"]["decode_bound"] = gpu.decode_bound;
  document["gpu"]["weight_bytes_per_gpu"] = gpu.weight_bytes_per_gpu;
  document["gpu"]["kv_bytes_per_gpu"] = gpu.kv_bytes_per_gpu;
  document["note"] = kReferenceNote;

  Report report;
  report.document = std::move(document);
  report.table = std::move(out);
  return report;
}

}  // namespace wafersim::reports
