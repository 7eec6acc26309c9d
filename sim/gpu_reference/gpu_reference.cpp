#include "sim/gpu_reference/gpu_reference.h"

#include <algorithm>
#include <cstdio>

#include "workloads/graph.h"

namespace wafersim::gpu_reference {

namespace {

// A decode longer than this is timed at this many evenly spaced steps: the
// step time grows smoothly with the context, so the mean barely moves.
constexpr uint64_t kMaxDecodeStepsEvaluated = 64;

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

// A ring all-reduce of `bytes` over `gpus`: each GPU sends and receives
// 2 (N-1)/N of the message over its links, one direction at a time.
double all_reduce_us(double bytes, uint32_t gpus, const GpuSpec& gpu, const Assumptions& a) {
  if (gpus <= 1) return 0;
  const double per_direction_bytes_per_s = gpu.nvlink_bytes_per_s / 2 * a.nvlink_efficiency;
  return a.all_reduce_latency_us + 2.0 * (gpus - 1) / gpus * bytes / per_direction_bytes_per_s * 1e6;
}

// One pass (a decode step or a prefill) over the graph's totals.
StepTimes pass_times(const workloads::ModelSpec& model, const workloads::GraphTotals& totals, uint64_t rows,
                     const GpuSystem& system, uint32_t kv_shards, const Assumptions& a) {
  const GpuSpec& gpu = system.gpu;
  StepTimes t;
  const double kv_bytes = double(totals.kv_bytes_read + totals.kv_bytes_written);
  const double bytes_per_gpu = double(totals.weight_bytes_read) / system.count + kv_bytes / kv_shards;
  t.hbm_bytes_per_gpu = bytes_per_gpu;
  t.memory_us = bytes_per_gpu / (gpu.hbm_bytes_per_s * a.hbm_efficiency) * 1e6;
  t.compute_us = double(totals.flops) / system.count /
                 (gpu_peak_flops_per_s(gpu, model.weight_dtype) * a.compute_efficiency) * 1e6;
  // Megatron-style tensor parallelism: one all-reduce after attention's output
  // projection and one after the MLP's down projection, of every row's d_model activations.
  const double message_bytes = double(dtype_bytes(model.activation_dtype, model.d_model)) * rows;
  t.all_reduce_us = 2.0 * model.n_layers * all_reduce_us(message_bytes, system.count, gpu, a);
  t.overhead_us = model.n_layers * a.layer_overhead_us;
  t.total_us = std::max(t.memory_us, t.compute_us) + t.all_reduce_us + t.overhead_us;
  return t;
}

void add(StepTimes& sum, const StepTimes& t) {
  sum.hbm_bytes_per_gpu += t.hbm_bytes_per_gpu;
  sum.memory_us += t.memory_us;
  sum.compute_us += t.compute_us;
  sum.all_reduce_us += t.all_reduce_us;
  sum.overhead_us += t.overhead_us;
  sum.total_us += t.total_us;
}

StepTimes scaled(StepTimes t, double factor) {
  t.hbm_bytes_per_gpu *= factor;
  t.memory_us *= factor;
  t.compute_us *= factor;
  t.all_reduce_us *= factor;
  t.overhead_us *= factor;
  t.total_us *= factor;
  return t;
}

}  // namespace

Result evaluate(const workloads::ModelSpec& model, const workloads::WorkloadSpec& workload, const GpuSystem& system,
                const Assumptions& assumptions) {
  Result r;
  r.system = system.label();
  r.gpus = system.count;
  r.kv_shards = std::max<uint32_t>(1, std::min(system.count, model.cached_kv_heads()));

  // Capacity: every weight (all experts) split over the GPUs, and the cache of
  // every sequence at the largest context split over the KV heads' shards.
  r.weight_bytes_per_gpu = double(workloads::count_params(model).weight_bytes) / system.count;
  r.kv_bytes_per_gpu =
      double(workloads::kv_bytes_at_context(model, workload.max_context())) * workload.batch / r.kv_shards;
  if (r.weight_bytes_per_gpu + r.kv_bytes_per_gpu > system.gpu.hbm_bytes)
    throw DoesNotFitError(model.name + " needs " + gigabytes(r.weight_bytes_per_gpu + r.kv_bytes_per_gpu) +
                          " per GPU on " + r.system + " (weights " + gigabytes(r.weight_bytes_per_gpu) + ", KV cache " +
                          gigabytes(r.kv_bytes_per_gpu) + " at " + std::to_string(workload.max_context()) +
                          " positions x batch " + std::to_string(workload.batch) + "), more than one " +
                          system.gpu.name + "'s " + gigabytes(system.gpu.hbm_bytes) +
                          " of HBM; more GPUs would hold it");

  // Decode: step s attends to the prompt, the s tokens before it and itself.
  const uint64_t steps = std::max<uint64_t>(1, workload.decode_tokens);
  const uint64_t evaluated = std::min(steps, kMaxDecodeStepsEvaluated);
  StepTimes first_step;
  for (uint64_t i = 0; i < evaluated; ++i) {
    const uint64_t step = evaluated == 1 ? 0 : i * (steps - 1) / (evaluated - 1);
    workloads::DecodeStep decode;
    decode.batch = workload.batch;
    decode.context = workload.prompt_tokens + step + 1;
    decode.seed = workload.seed;
    const StepTimes t = pass_times(model, workloads::graph_totals(workloads::build_decode_graph(model, decode)),
                                   workload.batch, system, r.kv_shards, assumptions);
    if (i == 0) first_step = t;
    add(r.decode, t);
  }
  r.decode = scaled(r.decode, 1.0 / double(evaluated));
  r.decode_steps_evaluated = uint32_t(evaluated);
  r.decode_bound = r.decode.memory_us >= r.decode.compute_us ? "HBM bandwidth" : "compute";
  r.tokens_per_second_per_user = 1e6 / r.decode.total_us;
  r.tokens_per_second = r.tokens_per_second_per_user * workload.batch;

  // Prefill: every sequence's prompt in one pass (no chunking), compute-bound
  // for any prompt of more than a few hundred tokens.
  if (workload.prefill && workload.prompt_tokens > 0) {
    workloads::PrefillStep prefill;
    prefill.batch = workload.batch;
    prefill.prompt_tokens = workload.prompt_tokens;
    prefill.seed = workload.seed;
    r.has_prefill = true;
    r.prefill = pass_times(model, workloads::graph_totals(workloads::build_prefill_graph(model, prefill)),
                           uint64_t(workload.batch) * workload.prompt_tokens, system, r.kv_shards, assumptions);
    r.time_to_first_token_us = r.prefill.total_us + first_step.total_us;
  }

  r.power_watts = system.gpu.tdp_watts * system.count;
  r.tokens_per_second_per_kw = r.tokens_per_second / (r.power_watts / 1e3);
  r.joules_per_token = r.power_watts / r.tokens_per_second;
  return r;
}

}  // namespace wafersim::gpu_reference
