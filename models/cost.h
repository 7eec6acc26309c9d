#pragma once
// Cost functions of the timing model (docs/ARCHITECTURE.md). The engine and the
// analytic model both call these, so the two agree by construction.
#include <cstdint>

#include "models/detours.h"
#include "models/dtype.h"
#include "models/field_list.h"
#include "models/hardware.h"

namespace wafersim {

struct Work {
  uint64_t flops = 0;
  uint64_t read_bytes = 0;   // SRAM bytes read
  uint64_t write_bytes = 0;  // SRAM bytes written
  // Vector (DSD) instructions a weight product issues: each costs
  // TileParams::vector_instruction_cycles on top of its elements (0: not counted).
  uint64_t vector_instructions = 0;

  auto fields() const { return std::tie(flops, read_bytes, write_bytes, vector_instructions); }
  bool operator==(const Work& other) const { return fields() == other.fields(); }
};
static_assert(aggregate_members<Work>() == listed_fields<Work>(), "Work::fields() must list every field");

// Componentwise sum and multiple of work (a task's fixed part plus its per-position part).
inline Work operator+(const Work& a, const Work& b) {
  return {a.flops + b.flops, a.read_bytes + b.read_bytes, a.write_bytes + b.write_bytes,
          a.vector_instructions + b.vector_instructions};
}
inline Work operator*(const Work& work, uint64_t factor) {
  return {work.flops * factor, work.read_bytes * factor, work.write_bytes * factor, work.vector_instructions * factor};
}

// overhead + max(ceil(flops / (2 * fmac)) + vector instructions x their cycles,
//                ceil(read / read_bw), ceil(write / write_bw))
uint64_t compute_cycles(const TileParams& tile, Dtype dtype, const Work& work);

// ceil(bytes / link_bytes_per_cycle): paid once per message (cut-through).
uint64_t serialization_cycles(const FabricParams& fabric, uint64_t bytes);

// What a route of `hops` logical hops pays for the repaired rows and columns
// it may cross (DetourTable, models/repair.h): extra hops * t_hop; 0 on a perfect wafer.
inline uint64_t detour_cycles(const FabricParams& fabric, uint32_t hops) {
  return fabric.detours ? uint64_t(fabric.detours->of(hops)) * fabric.hop_latency_cycles : 0;
}

// Contention-free point-to-point latency:
// ramp_on + hops * t_hop + turns * t_turn + relays * relay + ceil(bytes / link) + ramp_off
//   + detour_cycles(hops)
uint64_t message_cycles(const FabricParams& fabric, uint32_t hops, uint32_t turns, uint32_t relays, uint64_t bytes);

// Streamed (pipelined) combining, after the pipelined Reduce model of
// Luczynski et al., "Near-Optimal Wafer-Scale Reduce" (HPDC'24): a node adds
// each wavelet of its children's streams to its own and forwards it, so a tree
// pays its payload's serialisation about once and, per level, the ramps, the
// hops and one add: the "+1" of that model's (2 T_R + 1) per level.
constexpr uint64_t kStreamAddCycles = 1;

// When the tail of a stream leaves a node whose head left at `head`: the node
// is busy `busy_cycles` (its own serialisation, or its combining if slower),
// and it cannot finish before the tails of its input streams (`inputs_tail`,
// 0 when it has none) have arrived and been added.
inline uint64_t stream_tail_departure(uint64_t head, uint64_t busy_cycles, uint64_t inputs_tail) {
  const uint64_t own = head + busy_cycles;
  const uint64_t inputs = inputs_tail == 0 ? 0 : inputs_tail + kStreamAddCycles;
  return own > inputs ? own : inputs;
}

// Contention-free latency between wafers: ramp_on + latency + ceil(bytes / bw) + ramp_off.
uint64_t offwafer_message_cycles(const HardwareSpec& hw, uint64_t bytes);

}  // namespace wafersim
