#pragma once
// The compiler's output: regions on wafers, the tile programs the engine runs,
// and the figures `wafersim map` reports.
#include <cstdint>
#include <string>
#include <vector>

#include "mapping/does_not_fit.h"
#include "mapping/mapping_options.h"
#include "mapping/region.h"
#include "models/hardware.h"
#include "models/tile_program.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim::mapping {

struct RegionStats {
  uint64_t tiles = 0;
  uint64_t weight_bytes = 0;  // placed on its tiles
  uint64_t weight_elements = 0;
  uint64_t kv_bytes = 0;         // at the largest context of the workload
  uint64_t sram_peak_bytes = 0;  // the fullest tile, runtime reserve included
  uint64_t sram_mean_bytes = 0;
  uint64_t max_context_tokens = 0;  // largest context every tile still holds
  uint32_t patterns_peak = 0;       // routing patterns at the busiest router of one step
  uint32_t relayed_patterns = 0;
};

// Decode: an iteration is one token of one sequence, and the LM head feeds the
// embedding the next. Prefill: an iteration is one chunk of one sequence's
// prompt (in workload.prefill_order()), every chunk is present at cycle 0, and
// the plan ends at the last layer.
enum class Phase { Decode, Prefill };

struct Plan {
  Phase phase = Phase::Decode;
  uint32_t tokens_per_iteration = 1;  // prefill: the chunk size
  HardwareSpec hw;                    // hw.wafers resolved
  workloads::ModelSpec model;
  workloads::WorkloadSpec workload;
  MappingOptions options;
  uint32_t strips = 0;

  std::vector<Region> regions;     // token order: embedding, layers, LM head
  std::vector<RegionStats> stats;  // per region
  std::vector<Task> region_sends;  // region r's root to the next (the LM head's feeds the embedding; none after a
                                   // prefill's last layer); with slices the slowest of the pieces
  // The slices hand-off from region r to r + 1 (empty: the root sends the
  // whole vector), in the order the senders send them.
  struct HandoffPiece {
    uint32_t from = 0, to = 0;  // root-column tiles of region r and of region r + 1
    Task send;
  };
  std::vector<std::vector<HandoffPiece>> handoffs;
  ProgramSet programs;

  // The prefill's chunk as compile_plan chose it by mapping.prefill_chunk
  // (largest_fitting, fastest_fitting; 0: as asked, or no prefill).
  uint64_t chosen_prefill_chunk_tokens = 0;

  uint64_t tiles_used = 0, tiles_total = 0;
  uint64_t sram_peak_bytes = 0, sram_mean_bytes = 0;  // over used tiles
  uint32_t sram_peak_wafer = 0, sram_peak_x = 0, sram_peak_y = 0;
  uint64_t max_context_tokens = 0;
  uint32_t colors_peak = 0;  // colours used at the busiest router
  uint32_t relays = 0;       // routing patterns that go through relays
  uint64_t plan_bytes = 0;   // programs and per-tile tables

  static uint32_t mark_in(size_t region) { return uint32_t(2 * region); }
  static uint32_t mark_out(size_t region) { return uint32_t(2 * region + 1); }
};

// Compiles a decode workload onto the hardware. Throws DoesNotFitError
// (with the bytes needed, the bytes available and the wafer count that would
// fit) when the model does not fit.
Plan compile_plan(const HardwareSpec& hw, const workloads::ModelSpec& model, const workloads::WorkloadSpec& workload,
                  const MappingOptions& options);

// The prefill's chunk against every tile's SRAM: a step holds its inputs and
// outputs for each token of a chunk (StepSram::activation_bytes), beside the
// weights and the KV cache decode keeps.
//
// The largest chunk of at most workload.prefill_chunk_tokens whose buffers
// fit every tile (0: not even one token's).
uint64_t largest_fitting_chunk(const Plan& decode);
// Of the chunks that fit (1 .. largest_fitting), the one whose prefill of
// `decode` the closed form times fastest (fastest_chunk, chunk_search.h), as
// the chunks the prompt is cut into: a chunk of k tokens carries
// workload.prefill_chunk_size() of them, the same for several k.
uint64_t fastest_fitting_chunk(const Plan& decode, uint64_t largest_fitting);
// The chunk the prefill plan carries, by mapping.prefill_chunk:
// workload.prefill_chunk_tokens as asked, the largest of at most that which
// fits, or the fastest of those (DoesNotFitError when not even one token
// fits); compile_plan keeps the fitting choices (chosen_prefill_chunk_tokens).
uint64_t prefill_chunk_tokens(const Plan& decode);
// The prefill regions' fullest tiles with chunks of at most `chunk_tokens`
// (`built`: those regions, already built for that chunk, measured as they are).
struct PrefillSram {
  std::vector<uint64_t> region_peak_bytes;  // per region but the LM head, the runtime reserve included
  uint64_t peak_bytes = 0;                  // possibly over capacity
  uint32_t peak_wafer = 0, peak_x = 0, peak_y = 0;
};
PrefillSram prefill_sram(const Plan& decode, uint64_t chunk_tokens, const std::vector<Region>* built = nullptr);
// The prefill of a decode plan: the same regions on the same tiles (weights
// stay where decode reads them; so does the KV cache, but for a prefill laid
// out apart from decode, whose move to decode's tiles it charges), without
// the LM head, each step carrying a chunk of workload.prefill_chunk_size()
// tokens, with workload.prefill_chunk_tokens as prefill_chunk_tokens chose it (in
// an MoE layer every routed expert takes the busiest expert's load, its tokens
// routed one by one).
Plan compile_prefill_plan(const Plan& decode);

// The context region `r` of `decode` was built with, for the plans that
// rebuild it on its box with `tokens` per iteration (prefill chunks,
// speculative verification): the same colours, largest context and hand-off,
// so the rebuilt region times and lays out its messages as decode's does.
RegionContext decoded_region_context(const Plan& decode, size_t r, uint32_t tokens);
// A region's context for the prefill, from decode's (with the chunk's tokens):
// in the model's `last_layer` the chunk's last position is gathered to the
// root; `expert_tokens` as RegionContext::expert_tokens; `prompt_positions`:
// the longest prompt (RegionContext::prompt_positions).
RegionContext prefill_region_context(RegionContext context, bool last_layer, uint32_t expert_tokens,
                                     uint64_t prompt_positions);

}  // namespace wafersim::mapping
