#include "models/hardware.h"

#include "models/config/config.h"

namespace wafersim {

namespace {
constexpr double kUint32Max = 4294967295.0;
}  // namespace

// Declared defaults are the wse3 values (models/presets/wse3.yaml), except the
// grid and the clock: an experiment must say which wafer it runs on.
void declare_hardware_params(config::Schema& schema) {
  using config::float_param;
  using config::int_param;
  config::ParamSpec wafers = int_param("hardware.wafers", "wafers", "auto", 1, 1024,
                                       "Wafers joined by off-wafer links; auto = the fewest the model fits on");
  wafers.type = config::ParamType::IntOrAuto;

  schema.add(int_param("hardware.grid_width", "tiles", std::nullopt, 1, 100000, "Tiles per wafer in x"));
  schema.add(int_param("hardware.grid_height", "tiles", std::nullopt, 1, 100000, "Tiles per wafer in y"));
  schema.add(float_param("hardware.clock_ghz", "GHz", std::nullopt, 0.01, 10,
                         "Core and fabric clock; converts cycles to time at the output only"));
  schema.add(wafers);
  schema.add(int_param("hardware.tile.sram_bytes", "bytes", "49152", 1, kUint32Max, "SRAM capacity of one tile"));
  schema.add(int_param("hardware.tile.runtime_reserved_bytes", "bytes", "4176", 0, kUint32Max,
                       "SRAM per tile taken by the runtime; never planned by the compiler"));
  schema.add(int_param("hardware.tile.sram_read_bytes_per_cycle", "bytes/cycle", "16", 1, 65536,
                       "SRAM read bandwidth of one tile"));
  schema.add(int_param("hardware.tile.sram_write_bytes_per_cycle", "bytes/cycle", "8", 1, 65536,
                       "SRAM write bandwidth of one tile"));
  schema.add(int_param("hardware.tile.fmac_per_cycle_32bit", "FMAC/cycle", "2", 1, 65536,
                       "Fused multiply-adds per cycle on 32-bit operands"));
  schema.add(int_param("hardware.tile.fmac_per_cycle_16bit", "FMAC/cycle", "8", 1, 65536,
                       "Fused multiply-adds per cycle on 16-bit operands (FP16/BF16)"));
  schema.add(int_param("hardware.tile.fmac_per_cycle_8bit", "FMAC/cycle", "16", 1, 65536,
                       "Fused multiply-adds per cycle on 8-bit operands"));
  schema.add(int_param("hardware.tile.task_overhead_cycles", "cycles", "8", 0, 1e6,
                       "Fixed cost of starting any compute task on a tile"));
  schema.add(int_param("hardware.fabric.link_bytes_per_cycle", "bytes/cycle", "4", 1, 65536,
                       "Bandwidth of one mesh link per direction"));
  schema.add(int_param("hardware.fabric.hop_latency_cycles", "cycles", "1", 0, 1e6,
                       "Latency of a message head per router hop"));
  schema.add(int_param("hardware.fabric.turn_latency_cycles", "cycles", "1", 0, 1e6,
                       "Extra latency of an X-to-Y turn in a dimension-ordered route"));
  schema.add(int_param("hardware.fabric.ramp_on_cycles", "cycles", "2", 0, 1e6, "Core to router latency"));
  schema.add(int_param("hardware.fabric.ramp_off_cycles", "cycles", "2", 0, 1e6, "Router to core latency"));
  schema.add(
      int_param("hardware.fabric.colors", "colors", "24", 1, 32, "Routable colours (virtual channels) per router"));
  schema.add(int_param("hardware.fabric.colors_reserved", "colors", "3", 0, 32, "Colours taken by the runtime"));
  schema.add(int_param("hardware.fabric.relay_cycles", "cycles", "30", 0, 1e6,
                       "Cost of forwarding through a core when a router has no colour left"));
  schema.add(int_param("hardware.offwafer.latency_cycles", "cycles", "1100", 0, 1e12,
                       "Head latency of one transfer between neighbouring wafers"));
  schema.add(int_param("hardware.offwafer.bytes_per_cycle", "bytes/cycle", "136", 1, kUint32Max,
                       "Bandwidth between neighbouring wafers per direction"));
}

HardwareSpec hardware_from_config(const config::Config& config) {
  auto u32 = [&](const std::string& path) { return uint32_t(config.get_int(path)); };
  auto u64 = [&](const std::string& path) { return uint64_t(config.get_int(path)); };

  HardwareSpec spec;
  spec.name = config.preset("hardware").empty() ? "custom" : config.preset("hardware");
  spec.grid_width = u32("hardware.grid_width");
  spec.grid_height = u32("hardware.grid_height");
  spec.clock_ghz = config.get_float("hardware.clock_ghz");
  spec.wafers = u32("hardware.wafers");
  spec.tile.sram_bytes = u64("hardware.tile.sram_bytes");
  spec.tile.runtime_reserved_bytes = u64("hardware.tile.runtime_reserved_bytes");
  spec.tile.sram_read_bytes_per_cycle = u32("hardware.tile.sram_read_bytes_per_cycle");
  spec.tile.sram_write_bytes_per_cycle = u32("hardware.tile.sram_write_bytes_per_cycle");
  spec.tile.fmac_per_cycle_32bit = u32("hardware.tile.fmac_per_cycle_32bit");
  spec.tile.fmac_per_cycle_16bit = u32("hardware.tile.fmac_per_cycle_16bit");
  spec.tile.fmac_per_cycle_8bit = u32("hardware.tile.fmac_per_cycle_8bit");
  spec.tile.task_overhead_cycles = u32("hardware.tile.task_overhead_cycles");
  spec.fabric.link_bytes_per_cycle = u32("hardware.fabric.link_bytes_per_cycle");
  spec.fabric.hop_latency_cycles = u32("hardware.fabric.hop_latency_cycles");
  spec.fabric.turn_latency_cycles = u32("hardware.fabric.turn_latency_cycles");
  spec.fabric.ramp_on_cycles = u32("hardware.fabric.ramp_on_cycles");
  spec.fabric.ramp_off_cycles = u32("hardware.fabric.ramp_off_cycles");
  spec.fabric.colors = u32("hardware.fabric.colors");
  spec.fabric.colors_reserved = u32("hardware.fabric.colors_reserved");
  spec.fabric.relay_cycles = u32("hardware.fabric.relay_cycles");
  spec.offwafer.latency_cycles = u64("hardware.offwafer.latency_cycles");
  spec.offwafer.bytes_per_cycle = u32("hardware.offwafer.bytes_per_cycle");

  if (spec.tile.runtime_reserved_bytes >= spec.tile.sram_bytes)
    config.fail_given({"hardware.tile.sram_bytes", "hardware.tile.runtime_reserved_bytes"},
                      "runtime reserve (" + std::to_string(spec.tile.runtime_reserved_bytes) +
                          " bytes) must be less than the tile's SRAM (" + std::to_string(spec.tile.sram_bytes) +
                          " bytes)");
  if (spec.fabric.colors_reserved >= spec.fabric.colors)
    config.fail_given({"hardware.fabric.colors", "hardware.fabric.colors_reserved"},
                      std::to_string(spec.fabric.colors_reserved) + " reserved colors leave none of the " +
                          std::to_string(spec.fabric.colors) + " colors for routes");
  return spec;
}

}  // namespace wafersim
