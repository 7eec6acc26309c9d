#include "models/cost.h"

#include <algorithm>

namespace wafersim {

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

uint32_t fmac_per_cycle(const TileParams& tile, Dtype dtype) {
  switch (dtype_compute_bits(dtype)) {
    case 32: return tile.fmac_per_cycle_32bit;
    case 16: return tile.fmac_per_cycle_16bit;
    default: return tile.fmac_per_cycle_8bit;
  }
}
}  // namespace

uint64_t compute_cycles(const TileParams& tile, Dtype dtype, const Work& work) {
  const uint64_t math = ceil_div(work.flops, 2 * uint64_t(fmac_per_cycle(tile, dtype))) +
                        work.vector_instructions * tile.vector_instruction_cycles;
  const uint64_t reads = ceil_div(work.read_bytes, tile.sram_read_bytes_per_cycle);
  const uint64_t writes = ceil_div(work.write_bytes, tile.sram_write_bytes_per_cycle);
  return tile.task_overhead_cycles + std::max({math, reads, writes});
}

uint64_t serialization_cycles(const FabricParams& fabric, uint64_t bytes) {
  return ceil_div(bytes, fabric.link_bytes_per_cycle);
}

uint64_t message_cycles(const FabricParams& fabric, uint32_t hops, uint32_t turns, uint32_t relays, uint64_t bytes) {
  return fabric.ramp_on_cycles + uint64_t(hops) * fabric.hop_latency_cycles +
         uint64_t(turns) * fabric.turn_latency_cycles + uint64_t(relays) * fabric.relay_cycles +
         serialization_cycles(fabric, bytes) + fabric.ramp_off_cycles + detour_cycles(fabric, hops);
}

uint64_t offwafer_message_cycles(const HardwareSpec& hw, uint64_t bytes) {
  return hw.fabric.ramp_on_cycles + hw.offwafer.latency_cycles + ceil_div(bytes, hw.offwafer.bytes_per_cycle) +
         hw.fabric.ramp_off_cycles;
}

}  // namespace wafersim
