#pragma once
// The hardware a simulation runs on: one or more wafers of tiles on a 2D mesh.
// Values come from a preset (models/presets/*.yaml) and the experiment file.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/defect_map.h"

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config
struct DetourTable;
class WaferRepairs;

struct TileParams {
  uint64_t sram_bytes = 0;              // capacity per tile
  uint64_t runtime_reserved_bytes = 0;  // taken by the runtime, never planned
  uint32_t sram_read_bytes_per_cycle = 0;
  uint32_t sram_write_bytes_per_cycle = 0;
  uint32_t fmac_per_cycle_32bit = 0;  // fused multiply-adds per cycle by arithmetic width
  uint32_t fmac_per_cycle_16bit = 0;
  uint32_t fmac_per_cycle_8bit = 0;
  uint32_t task_overhead_cycles = 0;  // fixed cost of starting any compute task
  // What each vector (DSD) instruction of a weight product costs beyond its
  // elements' share of the multiply-add rate (Work::vector_instructions).
  uint32_t vector_instruction_cycles = 0;
};

struct FabricParams {
  uint32_t link_bytes_per_cycle = 0;  // per direction per link
  uint32_t hop_latency_cycles = 0;
  uint32_t turn_latency_cycles = 0;  // X-to-Y turn in a dimension-ordered route
  uint32_t ramp_on_cycles = 0;       // core to router
  uint32_t ramp_off_cycles = 0;      // router to core
  uint32_t colors = 0;               // routable colours per router
  uint32_t colors_reserved = 0;      // of those, taken by the runtime
  uint32_t relay_cycles = 0;         // cost of forwarding through a core when no colour is left
  // Extra hops around what the repair skipped (models/repair.h), over the
  // run's wafers; null on perfect wafers. Set by the compiler.
  std::shared_ptr<const DetourTable> detours;
};

struct OffWaferParams {
  uint64_t latency_cycles = 0;   // one off-wafer transfer, head latency
  uint32_t bytes_per_cycle = 0;  // bandwidth per direction between neighbouring wafers
};

// What each event of a run costs in energy, and the power the system is
// rated at (docs/ENERGY.md gives each figure's source and uncertainty).
struct EnergyParams {
  double fmac_pj_32bit = 0;  // one fused multiply-add (two flops) by arithmetic width
  double fmac_pj_16bit = 0;
  double fmac_pj_8bit = 0;
  double sram_read_pj_per_byte = 0;
  double sram_write_pj_per_byte = 0;
  double link_pj_per_byte_hop = 0;      // one byte through one router and across one mesh link
  double offwafer_pj_per_byte = 0;      // one byte from one wafer to another
  double tile_static_pj_per_cycle = 0;  // leakage and clock of one tile, every cycle, busy or not
  double system_fixed_watts = 0;        // per wafer: cooling and the rest of its system, whatever runs
  double rated_power_watts = 0;         // per wafer: the system's published rating; 0: none published
  uint64_t peak_window_cycles = 0;      // peak power is the highest mean over windows this long
};

struct HardwareSpec {
  std::string name;          // preset name or "custom"
  uint32_t grid_width = 0;   // tiles per wafer in x
  uint32_t grid_height = 0;  // tiles per wafer in y
  double clock_ghz = 0;
  uint32_t wafers = 0;  // 0 = "auto": the compiler picks the fewest that fit
  TileParams tile;
  FabricParams fabric;
  OffWaferParams offwafer;
  EnergyParams energy;
  DefectParams defects;
  SpareParams spares;
  // Each wafer's logical grid built around its defects; null without defects.
  // The compiler sets fabric.detours from it once it knows how many wafers.
  std::shared_ptr<const WaferRepairs> repairs;

  uint64_t tiles_per_wafer() const { return uint64_t(grid_width) * grid_height; }
  uint64_t usable_sram_bytes() const { return tile.sram_bytes - tile.runtime_reserved_bytes; }
  double cycles_to_us(double cycles) const { return cycles / (clock_ghz * 1e3); }
};

// Declares every hardware.* parameter.
void declare_hardware_params(config::Schema& schema);
// Reads hardware.* from a validated config (cross-field checks throw ConfigError).
HardwareSpec hardware_from_config(const config::Config& config);

// The hardware.* parameters alone, for a hardware section read without an experiment.
const config::Schema& hardware_schema();
// The section `hardware: NAME` on its own: NAME is a preset or a file (relative
// to the working directory), with `overrides` ("hardware.a.b=value", hardware
// parameters only) applied. `origin` stands for the text in error messages.
config::Config load_hardware_config(const std::string& name, const std::vector<std::string>& overrides = {},
                                    const std::string& origin = "<command line>");

}  // namespace wafersim
