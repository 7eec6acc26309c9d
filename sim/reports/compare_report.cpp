#include "sim/reports/compare_report.h"

#include <memory>

#include <fmt/format.h>

#include "mapping/does_not_fit.h"
#include "sim/reports/decode_run.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

namespace {

// A Cerebras CS-3 (one WSE-3) is rated at about 23 kW:
// https://awesomeagents.ai/hardware/cerebras-wse-3 states "Powers the CS-3
// system at ~23kW" (a secondary page; Cerebras' own datasheet was not
// retrieved). The whole system (wafer, power supplies, cooling), against the
// GPUs' TDP alone: the comparison favours the GPUs. docs/GPU_REFERENCE.md.
constexpr double kCs3SystemPowerWatts = 23e3;

constexpr const char* kReferenceNote =
    "the GPU column is a closed-form reference (HBM and compute roofline, NVLink all-reduces, a fixed cost per "
    "layer; docs/GPU_REFERENCE.md), not a GPU simulation";

std::string number(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

struct Side {
  double tokens_per_s_per_user = 0, tokens_per_s = 0, per_token_latency_us = 0;
  std::optional<double> ttft_ms, power_w;
};

nlohmann::json side_json(const Side& s) {
  nlohmann::json j;
  j["tokens_per_s_per_user"] = s.tokens_per_s_per_user;
  j["tokens_per_s"] = s.tokens_per_s;
  j["per_token_latency_us"] = s.per_token_latency_us;
  j["time_to_first_token_ms"] = s.ttft_ms ? nlohmann::json(*s.ttft_ms) : nlohmann::json(nullptr);
  j["power_w"] = s.power_w ? nlohmann::json(*s.power_w) : nlohmann::json(nullptr);
  j["tokens_per_s_per_kw"] = s.power_w ? nlohmann::json(s.tokens_per_s / (*s.power_w / 1e3)) : nlohmann::json(nullptr);
  j["joules_per_token"] = s.power_w ? nlohmann::json(*s.power_w / s.tokens_per_s) : nlohmann::json(nullptr);
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

std::optional<double> wafer_system_power_watts(const HardwareSpec& hw) {
  if (hw.name == "wse3") return kCs3SystemPowerWatts * hw.wafers;
  return std::nullopt;
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
  wafer.power_w = wafer_system_power_watts(plan.hw);

  Side g;
  g.tokens_per_s_per_user = gpu.tokens_per_second_per_user;
  g.tokens_per_s = gpu.tokens_per_second;
  g.per_token_latency_us = gpu.decode.total_us;
  if (gpu.has_prefill) g.ttft_ms = gpu.time_to_first_token_us / 1e3;
  g.power_w = gpu.power_watts;

  const std::string wafer_name = fmt::format("{} x{}", plan.hw.name, plan.hw.wafers);
  Table table({{"figure", "", false}, {"wafer: " + wafer_name, "", true}, {"gpu: " + gpu.system, "", true}});
  auto optional_cell = [](const std::optional<double>& v, int decimals) {
    return v ? number(*v, decimals) : std::string("n/a");
  };
  auto per_kw = [](const Side& s) {
    return s.power_w ? number(s.tokens_per_s / (*s.power_w / 1e3), 1) : std::string("n/a");
  };
  auto joules = [](const Side& s) { return s.power_w ? number(*s.power_w / s.tokens_per_s, 3) : std::string("n/a"); };
  table.add_row({"tokens_per_s_per_user", number(wafer.tokens_per_s_per_user, 1), number(g.tokens_per_s_per_user, 1)});
  table.add_row({"tokens_per_s (all users)", number(wafer.tokens_per_s, 1), number(g.tokens_per_s, 1)});
  table.add_row({"per_token_latency_us", number(wafer.per_token_latency_us, 2), number(g.per_token_latency_us, 2)});
  table.add_row({"time_to_first_token_ms", optional_cell(wafer.ttft_ms, 3), optional_cell(g.ttft_ms, 3)});
  table.add_row({"power_kw", wafer.power_w ? number(*wafer.power_w / 1e3, 1) : "n/a", number(*g.power_w / 1e3, 1)});
  table.add_row({"tokens_per_s_per_kw", per_kw(wafer), per_kw(g)});
  table.add_row({"joules_per_token_j", joules(wafer), joules(g)});

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
  if (!wafer.power_w)
    out += "wafer power: n/a (a rated system power is known for the wse3 preset only: a CS-3, about 23 kW)\n";
  else
    out +=
        "power: wafer = CS-3 system rating (about 23 kW per wafer); gpu = TDP x GPUs (hosts and switches excluded)\n";
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
