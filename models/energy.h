#pragma once
// The energy model (docs/ENERGY.md): what a run's events cost at the
// per-event energies of the hardware (HardwareSpec::energy), and the power
// drawn whatever runs. Events are counted from the programs
// (models/program_events.h), so every backend counts the same ones; only the
// time-dependent part depends on how long the run took.
#include <cstdint>
#include <tuple>

#include "models/field_list.h"
#include "models/hardware.h"

namespace wafersim {

// What the tiles did, by the kind of energy it costs.
struct EventCounts {
  uint64_t flops_32bit = 0;  // by arithmetic width (models/dtype.h: 4-bit formats compute at 8 bits)
  uint64_t flops_16bit = 0;
  uint64_t flops_8bit = 0;
  uint64_t sram_read_bytes = 0;
  uint64_t sram_write_bytes = 0;
  uint64_t link_byte_hops = 0;  // bytes times the mesh links they crossed
  uint64_t offwafer_bytes = 0;

  auto fields() const {
    return std::tie(flops_32bit, flops_16bit, flops_8bit, sram_read_bytes, sram_write_bytes, link_byte_hops,
                    offwafer_bytes);
  }
  bool operator==(const EventCounts& other) const { return fields() == other.fields(); }
  // Inline: the closed form adds a few of these per region and token.
  EventCounts& operator+=(const EventCounts& other) {
    flops_32bit += other.flops_32bit;
    flops_16bit += other.flops_16bit;
    flops_8bit += other.flops_8bit;
    sram_read_bytes += other.sram_read_bytes;
    sram_write_bytes += other.sram_write_bytes;
    link_byte_hops += other.link_byte_hops;
    offwafer_bytes += other.offwafer_bytes;
    return *this;
  }
  EventCounts& operator-=(const EventCounts& other) {  // what a += added
    flops_32bit -= other.flops_32bit;
    flops_16bit -= other.flops_16bit;
    flops_8bit -= other.flops_8bit;
    sram_read_bytes -= other.sram_read_bytes;
    sram_write_bytes -= other.sram_write_bytes;
    link_byte_hops -= other.link_byte_hops;
    offwafer_bytes -= other.offwafer_bytes;
    return *this;
  }
};
static_assert(aggregate_members<EventCounts>() == listed_fields<EventCounts>(),
              "EventCounts::fields() must list every field");

inline EventCounts operator+(EventCounts a, const EventCounts& b) { return a += b; }
inline EventCounts operator*(const EventCounts& c, uint64_t factor) {
  return {c.flops_32bit * factor,      c.flops_16bit * factor,    c.flops_8bit * factor,    c.sram_read_bytes * factor,
          c.sram_write_bytes * factor, c.link_byte_hops * factor, c.offwafer_bytes * factor};
}

// Joules of a run (or a part of one), by where they go.
struct EnergyJoules {
  double compute = 0;  // multiply-adds
  double sram = 0;     // SRAM reads and writes
  double fabric = 0;   // bytes across mesh links
  double offwafer = 0;
  double tile_static = 0;   // leakage and clock of every tile of every wafer
  double system_fixed = 0;  // the rest of each wafer's system (cooling)

  double static_total() const { return tile_static + system_fixed; }
  double total() const { return compute + sram + fabric + offwafer + static_total(); }
  EnergyJoules& operator+=(const EnergyJoules& other);
};

// The events' energy (the static parts zero).
EnergyJoules dynamic_energy(const EnergyParams& energy, const EventCounts& counts);
// What every tile and each wafer's system draw over `cycles`, working or not.
EnergyJoules static_energy(const HardwareSpec& hw, uint64_t cycles);
// Both: the events, over a run of `cycles`.
EnergyJoules run_energy(const HardwareSpec& hw, const EventCounts& counts, uint64_t cycles);
// The power static_energy stands for, in watts.
double static_watts(const HardwareSpec& hw);
// The rating of every wafer's system together; 0 when the preset publishes none.
double rated_watts(const HardwareSpec& hw);

}  // namespace wafersim
