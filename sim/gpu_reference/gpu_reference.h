#pragma once
// The GPU reference: a closed-form estimate of how a model and workload that
// wafersim reads would decode on a GPU system (presets in models/gpu.h). It is
// a reference to compare the wafer with, NOT a GPU simulator: no kernels,
// caches, schedulers or serving stack are modelled, only the roofline of what
// one decode step must read and compute, the tensor-parallel all-reduces and
// a fixed cost per layer (docs/GPU_REFERENCE.md).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/gpu.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim::gpu_reference {

// What a GPU achieves of its datasheet figures. None is fitted to a
// measurement the reference is validated against; docs/GPU_REFERENCE.md gives
// each one's source or states it as an assumption, with its range.
struct Assumptions {
  // Fraction of the HBM bandwidth a decode step's weight and KV reads reach.
  // Measured on H100 (Nsight Compute, 70B BF16 TP=8): MLP weight loads 78 %,
  // coalesced matrix loads 84 % of 3.35 TB/s; range 0.6-0.92.
  double hbm_efficiency = 0.80;
  // Fraction of the dense tensor-core peak a prefill's GEMMs reach. Assumption; range 0.4-0.8.
  double compute_efficiency = 0.60;
  // Fraction of NVLink's per-direction bandwidth a ring all-reduce reaches. Assumption; range 0.6-0.9.
  double nvlink_efficiency = 0.80;
  // Fixed latency of one all-reduce (launch, synchronisation, the ring's
  // 2(N-1) steps of small messages). Assumption; range 3-20 us.
  double all_reduce_latency_us = 8;
  // Fixed cost per layer and step: about ten kernels (norms, projections,
  // rotary, attention, activation), each with about 2 us of launch and tail
  // in which HBM is not streaming, CUDA graphs assumed. Assumption; range 10-40 us.
  double layer_overhead_us = 20;
};

// The model does not fit in the GPUs' HBM (exit 3 in `compare`).
class DoesNotFitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One decode step (every sequence of the batch adds one token), per token of
// a sequence, as means over the decode.
struct StepTimes {
  double hbm_bytes_per_gpu = 0;  // weights (the routed experts only) and KV cache one GPU reads and writes
  double memory_us = 0;          // weight and KV bytes one GPU reads, at the achievable HBM bandwidth
  double compute_us = 0;         // FLOPs one GPU does, at the achievable tensor-core peak
  double all_reduce_us = 0;      // two per layer with more than one GPU
  double overhead_us = 0;        // layer_overhead_us per layer
  double total_us = 0;           // max(memory, compute) + all_reduce + overhead
};

struct Result {
  std::string system;                   // "h100x8"
  uint32_t gpus = 0;                    // tensor-parallel degree
  uint32_t kv_shards = 0;               // GPUs the KV cache is split over: min(gpus, cached KV heads)
  StepTimes decode;                     // mean over the decode's steps
  uint32_t decode_steps_evaluated = 0;  // steps timed (at most 64, evenly spaced; the mean is over them)
  double tokens_per_second_per_user = 0;
  double tokens_per_second = 0;  // every sequence of the batch
  bool has_prefill = false;
  StepTimes prefill;                  // the whole batch's prompts in one pass
  double time_to_first_token_us = 0;  // prefill + the first decode step, as wafersim's metric counts it
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_gpu = 0;  // at the workload's largest context, every sequence
  double power_watts = 0;       // TDP x GPUs: an upper bound of what the GPUs draw, hosts and switches excluded
  double tokens_per_second_per_kw = 0;
  double joules_per_token = 0;
  std::string decode_bound;  // "HBM bandwidth" or "compute": which of the two dominates a decode step
};

// Throws DoesNotFitError when the weights (all experts) and the KV cache at the
// largest context do not fit in one GPU's HBM after tensor parallelism.
Result evaluate(const workloads::ModelSpec& model, const workloads::WorkloadSpec& workload, const GpuSystem& system,
                const Assumptions& assumptions = {});

}  // namespace wafersim::gpu_reference
