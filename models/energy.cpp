#include "models/energy.h"

namespace wafersim {

namespace {
constexpr double kJoulesPerPicojoule = 1e-12;

uint64_t wafers_of(const HardwareSpec& hw) { return hw.wafers == 0 ? 1 : hw.wafers; }
}  // namespace

EnergyJoules& EnergyJoules::operator+=(const EnergyJoules& other) {
  compute += other.compute;
  sram += other.sram;
  fabric += other.fabric;
  offwafer += other.offwafer;
  tile_static += other.tile_static;
  system_fixed += other.system_fixed;
  return *this;
}

EnergyJoules dynamic_energy(const EnergyParams& e, const EventCounts& c) {
  EnergyJoules out;
  // A fused multiply-add is two flops.
  out.compute = (double(c.flops_32bit) * e.fmac_pj_32bit + double(c.flops_16bit) * e.fmac_pj_16bit +
                 double(c.flops_8bit) * e.fmac_pj_8bit) /
                2 * kJoulesPerPicojoule;
  out.sram =
      (double(c.sram_read_bytes) * e.sram_read_pj_per_byte + double(c.sram_write_bytes) * e.sram_write_pj_per_byte) *
      kJoulesPerPicojoule;
  out.fabric = double(c.link_byte_hops) * e.link_pj_per_byte_hop * kJoulesPerPicojoule;
  out.offwafer = double(c.offwafer_bytes) * e.offwafer_pj_per_byte * kJoulesPerPicojoule;
  return out;
}

EnergyJoules static_energy(const HardwareSpec& hw, uint64_t cycles) {
  EnergyJoules out;
  const double tiles = double(hw.tiles_per_wafer() * wafers_of(hw));
  out.tile_static = tiles * double(cycles) * hw.energy.tile_static_pj_per_cycle * kJoulesPerPicojoule;
  const double seconds = hw.cycles_to_us(double(cycles)) / 1e6;
  out.system_fixed = double(wafers_of(hw)) * hw.energy.system_fixed_watts * seconds;
  return out;
}

EnergyJoules run_energy(const HardwareSpec& hw, const EventCounts& counts, uint64_t cycles) {
  EnergyJoules out = dynamic_energy(hw.energy, counts);
  out += static_energy(hw, cycles);
  return out;
}

double static_watts(const HardwareSpec& hw) {
  const double tiles = double(hw.tiles_per_wafer() * wafers_of(hw));
  return tiles * hw.energy.tile_static_pj_per_cycle * kJoulesPerPicojoule * hw.clock_ghz * 1e9 +
         double(wafers_of(hw)) * hw.energy.system_fixed_watts;
}

double rated_watts(const HardwareSpec& hw) { return double(wafers_of(hw)) * hw.energy.rated_power_watts; }

}  // namespace wafersim
