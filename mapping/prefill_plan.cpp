// The prefill plan: the decode plan's regions rebuilt for chunks of the prompt.
// Every step's work and messages scale with the chunk (StepEnv::tokens), which
// times a chunk as its tokens passing each step back to back: a step starts
// once the whole chunk has reached it, so tokens of one chunk do not overlap
// across steps (chunks overlap across regions, in the layer pipeline).
#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "mapping/chunk_search.h"
#include "mapping/measure_region.h"
#include "mapping/plan.h"
#include "mapping/programs.h"
#include "mapping/timeline.h"
#include "workloads/prefill_inputs.h"
#include "workloads/workload_spec.h"

namespace wafersim::mapping {

namespace {

// Tokens the busiest routed expert of an MoE layer takes per chunk, routed
// token by token as decode routes them (ExpertRouter, keyed by sequence and
// position; padding is not routed): the mean over the prompt's chunks of each
// chunk's busiest expert, rounded up. The plan gives every routed expert that
// many tokens, since a chunk leaves the layer when its busiest expert is done;
// an expert's time is linear in its tokens, so the layer's total over the
// chunks is the busiest experts' to within the rounding.
uint32_t busiest_expert_tokens(const workloads::ModelSpec& m, const workloads::WorkloadSpec& w, uint32_t layer) {
  const workloads::ExpertRouter router(w.seed, m.moe.n_experts, m.moe.top_k);
  const uint64_t size = w.prefill_chunk_size();
  std::vector<uint32_t> load(m.moe.n_experts), chosen(m.moe.top_k);
  uint64_t busiest_sum = 0, chunks = 0;
  for (const auto& [sequence, chunk] : w.prefill_order()) {
    std::fill(load.begin(), load.end(), 0);
    const uint64_t first = chunk * size, end = std::min(first + size, w.prompt(sequence));
    for (uint64_t position = first; position < end; ++position) {
      router.route(sequence, position, layer, chosen.data());
      for (uint32_t expert : chosen) ++load[expert];
    }
    busiest_sum += *std::max_element(load.begin(), load.end());
    ++chunks;
  }
  return chunks == 0 ? 0 : uint32_t((busiest_sum + chunks - 1) / chunks);
}

// Tokens each routed expert of region r takes per chunk of `workload` (0: not an MoE layer).
uint32_t region_expert_tokens(const Plan& decode, const workloads::WorkloadSpec& workload, size_t r) {
  const Region& region = decode.regions[r];
  return region.kind == RegionKind::Moe ? busiest_expert_tokens(decode.model, workload, uint32_t(region.layer)) : 0;
}

// Region r of `decode` rebuilt for a prefill of `workload`'s chunks, its routed experts taking `expert_tokens`.
Region prefill_region(const Plan& decode, const workloads::WorkloadSpec& workload, size_t r, uint32_t expert_tokens) {
  const Region& region = decode.regions[r];
  const RegionContext context =
      prefill_region_context(decoded_region_context(decode, r, uint32_t(workload.prefill_chunk_size())),
                             r + 2 == decode.regions.size(), expert_tokens, workload.prompt_tokens);
  return build_region(context, region.kind, region.layer, region.box);
}

// The fullest tile of every prefill region of `decode` (all but the LM head)
// with chunks of at most `chunk_tokens`: the weights, the KV cache reserved
// for the workload's largest context (decode's, placed once for both
// phases), and the chunk's buffers. Regions of one timing class with the same
// routed-expert load hold alike, so each such kind is built once (or taken
// from `built`, the prefill regions already built for that chunk).
struct ChunkSram {
  std::vector<uint64_t> peak_bytes;
  std::vector<FullestTile> fullest;
  size_t overflowing = SIZE_MAX;  // the first region that does not fit
};
ChunkSram chunk_sram(const Plan& decode, uint64_t chunk_tokens, const std::vector<Region>* built = nullptr) {
  workloads::WorkloadSpec workload = decode.workload;
  workload.prefill_chunk_tokens = chunk_tokens;
  const HardwareSpec& hw = decode.hw;
  const uint32_t colors = hw.fabric.colors - hw.fabric.colors_reserved;
  ChunkSram out;
  std::map<std::vector<uint64_t>, size_t> measured;  // kind -> the region that measured it
  for (size_t r = 0; r + 1 < decode.regions.size(); ++r) {
    const Region& region = decode.regions[r];
    const uint32_t expert_tokens = region_expert_tokens(decode, workload, r);
    std::vector<uint64_t> kind = region.timing_class;
    kind.push_back(r + 2 == decode.regions.size());
    kind.push_back(expert_tokens);
    if (const auto [known, fresh] = measured.try_emplace(std::move(kind), r); !fresh) {
      out.peak_bytes.push_back(out.peak_bytes[known->second]);
      out.fullest.push_back(moved(out.fullest[known->second], decode.regions[known->second].box, region.box));
    } else {
      FullestTile fullest;
      auto measure = [&](const Region& prefill) {
        return measure_region(prefill, hw, workload.max_context(), decode.options.stream_buffer_bytes, colors,
                              &fullest);
      };
      const RegionStats stats =
          built ? measure((*built)[r]) : measure(prefill_region(decode, workload, r, expert_tokens));
      out.peak_bytes.push_back(stats.sram_peak_bytes);
      out.fullest.push_back(fullest);
    }
    if (out.peak_bytes.back() > hw.tile.sram_bytes && out.overflowing == SIZE_MAX) out.overflowing = r;
  }
  return out;
}

}  // namespace

RegionContext prefill_region_context(RegionContext context, bool last_layer, uint32_t expert_tokens,
                                     uint64_t prompt_positions) {
  context.prefill = true;
  context.expert_tokens = expert_tokens;
  context.prompt_positions = prompt_positions;
  // The last layer gathers its slices to its root, where the prefill ends:
  // the chunk's last position only, the one the LM head would take.
  context.slices_out = context.slices_out && !last_layer;
  context.last_position_out = last_layer;
  return context;
}

uint64_t largest_fitting_chunk(const Plan& decode) {
  const uint64_t asked = decode.workload.prefill_chunk_tokens;
  if (chunk_sram(decode, asked).overflowing == SIZE_MAX) return asked;
  // The buffers grow with the chunk: the largest that fits lies in [lo, hi) (0: none does).
  uint64_t lo = 0, hi = asked;
  while (hi - lo > 1) {
    const uint64_t middle = lo + (hi - lo) / 2;
    (chunk_sram(decode, middle).overflowing == SIZE_MAX ? lo : hi) = middle;
  }
  return lo;
}

namespace {

// The prefill plan of `decode` carrying chunks of `chunk_tokens`.
Plan prefill_plan_with_chunk(const Plan& decode, uint64_t chunk_tokens) {
  Plan plan;
  plan.phase = Phase::Prefill;
  plan.hw = decode.hw;
  plan.model = decode.model;
  plan.workload = decode.workload;
  plan.options = decode.options;
  plan.strips = decode.strips;
  plan.workload.prefill_chunk_tokens = chunk_tokens;
  plan.tokens_per_iteration = uint32_t(plan.workload.prefill_chunk_size());
  for (size_t r = 0; r + 1 < decode.regions.size(); ++r)
    plan.regions.push_back(prefill_region(decode, plan.workload, r, region_expert_tokens(decode, plan.workload, r)));
  const PrefillSram sram = prefill_sram(decode, plan.workload.prefill_chunk_tokens, &plan.regions);
  for (size_t r = 0; r + 1 < decode.regions.size(); ++r) {
    plan.stats.push_back(decode.stats[r]);
    plan.stats.back().sram_peak_bytes = sram.region_peak_bytes[r];
    plan.tiles_used += decode.stats[r].tiles;
  }
  plan.sram_peak_bytes = sram.peak_bytes;
  plan.sram_peak_wafer = sram.peak_wafer;
  plan.sram_peak_x = sram.peak_x;
  plan.sram_peak_y = sram.peak_y;
  connect_regions(plan);
  build_programs(plan);
  plan.tiles_total = plan.programs.tiles();
  return plan;
}

// The closed form's time of the prefill of `decode` in chunks of `chunk_tokens`:
// its last chunk leaving the last region (the prefill's cycles, which the time
// to first token adds the first decode step to).
uint64_t prefill_cycles(const Plan& decode, uint64_t chunk_tokens) {
  const Plan plan = prefill_plan_with_chunk(decode, chunk_tokens);
  return last_exit_cycle(analytic_timeline(plan, workloads::PrefillInputs(plan.workload)));
}

}  // namespace

uint64_t fastest_fitting_chunk(const Plan& decode, uint64_t largest_fitting) {
  // Chunks of k tokens cut the prompt into pieces of prefill_chunk_size(),
  // the same pieces for several k: each is timed once, as what it carries.
  workloads::WorkloadSpec workload = decode.workload;
  auto carried = [&](uint64_t chunk) {
    workload.prefill_chunk_tokens = chunk;
    return workload.prefill_chunk_size();
  };
  std::map<uint64_t, uint64_t> timed;  // carried chunk -> prefill cycles
  const uint64_t chosen = fastest_chunk(largest_fitting, [&](uint64_t chunk) {
    const auto [at, fresh] = timed.try_emplace(carried(chunk), 0);
    if (fresh) at->second = prefill_cycles(decode, at->first);
    return at->second;
  });
  return carried(chosen);
}

uint64_t prefill_chunk_tokens(const Plan& decode) {
  if (decode.options.prefill_chunk == PrefillChunk::AsAsked) return decode.workload.prefill_chunk_tokens;
  if (decode.chosen_prefill_chunk_tokens > 0) return decode.chosen_prefill_chunk_tokens;
  const uint64_t chunk = largest_fitting_chunk(decode);
  if (chunk == 0) {
    const ChunkSram one = chunk_sram(decode, 1);
    throw DoesNotFitError(fmt::format("{} does not fit even a one-token prefill chunk: {}",
                                      decode.regions[one.overflowing].name,
                                      overflow_report(one.fullest[one.overflowing], decode.hw)));
  }
  return decode.options.prefill_chunk == PrefillChunk::FastestFitting ? fastest_fitting_chunk(decode, chunk) : chunk;
}

PrefillSram prefill_sram(const Plan& decode, uint64_t chunk_tokens, const std::vector<Region>* built) {
  const ChunkSram sram = chunk_sram(decode, chunk_tokens, built);
  PrefillSram out;
  out.region_peak_bytes = sram.peak_bytes;
  for (size_t r = 0; r < sram.peak_bytes.size(); ++r)
    if (sram.peak_bytes[r] > out.peak_bytes) {
      out.peak_bytes = sram.peak_bytes[r];
      out.peak_wafer = sram.fullest[r].wafer;
      out.peak_x = sram.fullest[r].x;
      out.peak_y = sram.fullest[r].y;
    }
  return out;
}

Plan compile_prefill_plan(const Plan& decode) { return prefill_plan_with_chunk(decode, prefill_chunk_tokens(decode)); }

}  // namespace wafersim::mapping
