#pragma once
// Decode metrics computed from a timeline, whichever backend produced it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "models/tile_program.h"
#include "sim/experiment/energy_metrics.h"
#include "sim/experiment/speculative_figures.h"
#include "sim/experiment/step_cycles.h"
#include "workloads/expert_load.h"

namespace wafersim {

struct LatencySummary {
  double mean = 0, p50 = 0, p99 = 0, max = 0;
};

struct LayerCycles {
  std::string name;
  double cycles_per_token = 0;  // mean over iterations of finish - start
};

// The prompt's prefill, timed before decode: decode starts once every
// sequence's prompt has passed the last layer.
struct PrefillMetrics {
  uint64_t chunk_tokens = 0;   // tokens per chunk (iteration)
  uint64_t chunks = 0;         // over every sequence
  uint64_t padded_tokens = 0;  // over every sequence: each one's last chunk filled up to chunk_tokens
  // The fullest tile's bytes with the chunk's buffers (possibly over a tile's
  // SRAM: mapping.prefill_chunk: as_asked takes the chunk whether or not it fits).
  uint64_t sram_peak_bytes = 0;
  uint64_t cycles = 0;  // until the last chunk left the last layer
  double seconds = 0;
  double tokens_per_second = 0;  // prompt tokens of every sequence over `seconds`
  std::array<double, size_t(Category::kCount)> breakdown{};
  std::vector<LayerCycles> per_layer;  // cycles_per_token here: per chunk
  // Every region's steps of the first chunk in closed form, whichever backend
  // timed the prefill (the account analytic gives of decode's first token).
  std::vector<StepCycles> steps;
  // Per sequence: the prefill of the whole batch, then its first decoded token.
  LatencySummary time_to_first_token_us;
  double end_to_end_tokens_per_second = 0;  // decoded tokens over prefill + decode
  EnergyMetrics energy;                     // joules_per_token: per prompt token
};

// A repaired wafer's decode in closed form against the same experiment on a
// perfect wafer (docs/DEFECTS.md).
struct DefectSlowdown {
  uint64_t closed_form_cycles = 0;    // this wafer's: total_cycles of the closed form
  uint64_t perfect_wafer_cycles = 0;  // the same without defects
  double slowdown() const { return double(closed_form_cycles) / double(perfect_wafer_cycles); }
};

struct DecodeMetrics {
  uint64_t tokens = 0;
  uint64_t total_cycles = 0;     // until the last token left the LM head
  double tokens_per_second = 0;  // all sequences
  double tokens_per_second_per_user = 0;
  LatencySummary per_token_latency_us;                       // from a sequence's previous token to this one
  std::vector<double> token_latencies_us;                    // the same for every iteration, in order
  double cycles_per_token = 0;                               // mean per-token latency in cycles
  std::array<double, size_t(Category::kCount)> breakdown{};  // fractions of the critical path
  std::vector<LayerCycles> per_layer;
  std::optional<PrefillMetrics> prefill;          // none: workload.prefill false (or not modelled for the model)
  std::optional<SpeculativeMetrics> speculative;  // none: plain decoding
  std::optional<workloads::ExpertLoad> moe;       // none: a model without MoE layers
  std::optional<DefectSlowdown> defects;          // none: a perfect wafer (or speculative decoding)
  EnergyMetrics energy;
};

// Mean, nearest-rank p50 and p99, and max of the values.
LatencySummary summarise(std::vector<double> values);
// Each category's share of the path's cycles.
std::array<double, size_t(Category::kCount)> fractions(const CriticalPath& path);
// Per region, the mean over iterations of finish - start.
std::vector<LayerCycles> per_region(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline);

// What a decode's metrics count from the plan and the routing alone: the
// energy's events and the experts' load. No timeline: counted while the
// backend times the decode. `inputs` as the backend has them.
struct DecodeCounts {
  CountedEnergy energy;
  std::optional<workloads::ExpertLoad> moe;  // none: a model without MoE layers
};
DecodeCounts count_decode(const mapping::Plan& plan, const IterationInputs& inputs);

DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline, DecodeCounts counts);
// `inputs` are those the backend evaluated the plan with (the energy's events depend on them).
DecodeMetrics decode_metrics(const mapping::Plan& plan, const mapping::DecodeTimeline& timeline,
                             const IterationInputs& inputs);
// `hw`: the whole system drawing static power (the plan's, unless it holds only some rows).
PrefillMetrics prefill_metrics(const mapping::Plan& prefill_plan, const mapping::DecodeTimeline& prefill,
                               const IterationInputs& inputs, const HardwareSpec& system, const DecodeMetrics& decode,
                               const mapping::DecodeTimeline& decode_timeline);

}  // namespace wafersim
