#include "models/hardware.h"

#include <filesystem>
#include <optional>

#include "models/config/embedded.h"
#include "models/config/param_table.h"
#include "models/config/value_text.h"
#include "models/wafer_repairs.h"

namespace wafersim {

namespace {

constexpr double kUint32Max = 4294967295.0;
// Named again by the cross-field checks.
constexpr const char* kSramBytes = "hardware.tile.sram_bytes";
constexpr const char* kRuntimeReservedBytes = "hardware.tile.runtime_reserved_bytes";
constexpr const char* kColors = "hardware.fabric.colors";
constexpr const char* kColorsReserved = "hardware.fabric.colors_reserved";
constexpr const char* kTileFailureRate = "hardware.defects.tile_failure_rate";
constexpr const char* kLinkFailureRate = "hardware.defects.link_failure_rate";
constexpr const char* kDefectMap = "hardware.defects.map";

using config::int_param;

// Declared defaults are the WSE-3 figures (docs/HARDWARE.md gives each one's
// source), except the grid and the clock: an experiment must say which wafer
// it runs on. A preset states only what differs from these.
config::ParamTable<TileParams> tile_table() {
  return config::ParamTable<TileParams>()
      .add(int_param(kSramBytes, "bytes", "49152", 1, kUint32Max, "SRAM capacity of one tile"), &TileParams::sram_bytes)
      .add(int_param(kRuntimeReservedBytes, "bytes", "4176", 0, kUint32Max,
                     "SRAM per tile taken by the runtime; never planned by the compiler"),
           &TileParams::runtime_reserved_bytes)
      .add(int_param("hardware.tile.sram_read_bytes_per_cycle", "bytes/cycle", "16", 1, 65536,
                     "SRAM read bandwidth of one tile"),
           &TileParams::sram_read_bytes_per_cycle)
      .add(int_param("hardware.tile.sram_write_bytes_per_cycle", "bytes/cycle", "8", 1, 65536,
                     "SRAM write bandwidth of one tile"),
           &TileParams::sram_write_bytes_per_cycle)
      .add(int_param("hardware.tile.fmac_per_cycle_32bit", "FMAC/cycle", "2", 1, 65536,
                     "Fused multiply-adds per cycle on 32-bit operands"),
           &TileParams::fmac_per_cycle_32bit)
      .add(int_param("hardware.tile.fmac_per_cycle_16bit", "FMAC/cycle", "8", 1, 65536,
                     "Fused multiply-adds per cycle on 16-bit operands (FP16/BF16)"),
           &TileParams::fmac_per_cycle_16bit)
      .add(int_param("hardware.tile.fmac_per_cycle_8bit", "FMAC/cycle", "16", 1, 65536,
                     "Fused multiply-adds per cycle on 8-bit operands"),
           &TileParams::fmac_per_cycle_8bit)
      .add(int_param("hardware.tile.task_overhead_cycles", "cycles", "8", 0, 1e6,
                     "Fixed cost of starting any compute task on a tile"),
           &TileParams::task_overhead_cycles)
      .add(int_param("hardware.tile.vector_instruction_cycles", "cycles", "7", 0, 1e6,
                     "What each multiply-add (DSD) instruction of a weight product (GEMV, GEMM) or of grid "
                     "attention costs beyond its elements' multiply-adds (mapping.vector_instruction_elements says "
                     "how many a weight product's covers)"),
           &TileParams::vector_instruction_cycles);
}

config::ParamTable<FabricParams> fabric_table() {
  return config::ParamTable<FabricParams>()
      .add(int_param("hardware.fabric.link_bytes_per_cycle", "bytes/cycle", "4", 1, 65536,
                     "Bandwidth of one mesh link per direction"),
           &FabricParams::link_bytes_per_cycle)
      .add(int_param("hardware.fabric.hop_latency_cycles", "cycles", "1", 0, 1e6,
                     "Latency of a message head per router hop"),
           &FabricParams::hop_latency_cycles)
      .add(int_param("hardware.fabric.turn_latency_cycles", "cycles", "1", 0, 1e6,
                     "Extra latency of an X-to-Y turn in a dimension-ordered route"),
           &FabricParams::turn_latency_cycles)
      .add(int_param("hardware.fabric.ramp_on_cycles", "cycles", "2", 0, 1e6, "Core to router latency"),
           &FabricParams::ramp_on_cycles)
      .add(int_param("hardware.fabric.ramp_off_cycles", "cycles", "2", 0, 1e6, "Router to core latency"),
           &FabricParams::ramp_off_cycles)
      .add(int_param(kColors, "colors", "24", 1, 32, "Routable colours (virtual channels) per router"),
           &FabricParams::colors)
      .add(int_param(kColorsReserved, "colors", "3", 0, 32, "Colours taken by the runtime"),
           &FabricParams::colors_reserved)
      .add(int_param("hardware.fabric.relay_cycles", "cycles", "30", 0, 1e6,
                     "Cost of forwarding through a core when a router has no colour left"),
           &FabricParams::relay_cycles);
}

config::ParamTable<OffWaferParams> offwafer_table() {
  return config::ParamTable<OffWaferParams>()
      .add(int_param("hardware.offwafer.latency_cycles", "cycles", "1100", 0, 1e12,
                     "Head latency of one transfer between neighbouring wafers"),
           &OffWaferParams::latency_cycles)
      .add(int_param("hardware.offwafer.bytes_per_cycle", "bytes/cycle", "136", 1, kUint32Max,
                     "Bandwidth between neighbouring wafers per direction"),
           &OffWaferParams::bytes_per_cycle);
}

config::ParamTable<EnergyParams> energy_table() {
  using config::float_param;
  // WSE-3 (TSMC 5 nm) figures: Horowitz's 45 nm energies (ISSCC 2014) scaled to
  // 7 nm by Stillmaker and Baas' equations and to 5 nm by TSMC's N5-over-N7
  // power figure; the fabric from MuchiSim's 7 nm router and wire energies.
  // docs/ENERGY.md derives each one and gives its uncertainty.
  return config::ParamTable<EnergyParams>()
      .add(float_param("hardware.energy.fmac_pj_32bit", "pJ", "0.1824", 0, 1e6,
                       "Energy of one fused multiply-add (two flops) on 32-bit operands"),
           &EnergyParams::fmac_pj_32bit)
      .add(float_param("hardware.energy.fmac_pj_16bit", "pJ", "0.05946", 0, 1e6,
                       "Energy of one fused multiply-add on 16-bit operands (FP16/BF16)"),
           &EnergyParams::fmac_pj_16bit)
      .add(float_param("hardware.energy.fmac_pj_8bit", "pJ", "0.009118", 0, 1e6,
                       "Energy of one fused multiply-add on 8-bit operands"),
           &EnergyParams::fmac_pj_8bit)
      .add(float_param("hardware.energy.sram_read_pj_per_byte", "pJ/byte", "0.04955", 0, 1e6,
                       "Energy of reading one byte of a tile's SRAM"),
           &EnergyParams::sram_read_pj_per_byte)
      .add(float_param("hardware.energy.sram_write_pj_per_byte", "pJ/byte", "0.04955", 0, 1e6,
                       "Energy of writing one byte of a tile's SRAM"),
           &EnergyParams::sram_write_pj_per_byte)
      .add(float_param("hardware.energy.link_pj_per_byte_hop", "pJ/(byte hop)", "0.7154", 0, 1e6,
                       "Energy of one byte through one router and across one mesh link"),
           &EnergyParams::link_pj_per_byte_hop)
      .add(float_param("hardware.energy.offwafer_pj_per_byte", "pJ/byte", "620", 0, 1e9,
                       "Energy of one byte from one wafer to another (both ends' transceivers)"),
           &EnergyParams::offwafer_pj_per_byte)
      .add(float_param("hardware.energy.tile_static_pj_per_cycle", "pJ/cycle", "5.250", 0, 1e9,
                       "Leakage and clock of one tile, every cycle of the run, busy or not"),
           &EnergyParams::tile_static_pj_per_cycle)
      .add(float_param("hardware.energy.system_fixed_watts", "W", "4000", 0, 1e9,
                       "Per wafer: the rest of its system (cooling), drawn whatever runs"),
           &EnergyParams::system_fixed_watts)
      .add(float_param("hardware.energy.rated_power_watts", "W", "23000", 0, 1e9,
                       "Per wafer: the system's published power rating, which a run is checked against; 0 = none"),
           &EnergyParams::rated_power_watts)
      .add(int_param("hardware.energy.peak_window_cycles", "cycles", "1100000", 1, 1e15,
                     "Peak power is the highest mean power over windows of this many cycles"),
           &EnergyParams::peak_window_cycles);
}

void read_map_file(const config::Config& config, const std::string& path, DefectParams& defects) {
  if (!config.get_string(path).empty()) defects.map_file = config.file_path(path);
}

// Defaults: a perfect wafer. The real scheme's spares are not public (docs/DEFECTS.md).
config::ParamTable<DefectParams> defect_table() {
  using config::float_param;
  return config::ParamTable<DefectParams>()
      .add(float_param(kTileFailureRate, "", "0", 0, 1, "Probability that a tile of the physical grid is dead"),
           &DefectParams::tile_failure_rate)
      .add(float_param(kLinkFailureRate, "", "0", 0, 1,
                       "Probability that a mesh link (to a tile's east or south neighbour) is dead"),
           &DefectParams::link_failure_rate)
      .add(int_param("hardware.defects.cluster_radius", "tiles", "0", 0, 1000,
                     "A drawn dead tile also kills every tile within this distance (defects cluster)"),
           &DefectParams::cluster_radius)
      .add(int_param("hardware.defects.seed", "", "1", 0, 9.0e15, "Seed of the drawn defects"), &DefectParams::seed)
      .add_converted(config::string_param(kDefectMap, "\"\"",
                                          "YAML or CSV list of dead tiles and links, in physical coordinates; relative "
                                          "to the experiment file; empty = draw from the failure rates"),
                     read_map_file)
      .add_enum<DetourCharge>("hardware.defects.detour_charge",
                              {{"worst", DetourCharge::Worst}, {"mean", DetourCharge::Mean}}, "worst",
                              "What a route of h hops pays around retired lines: the most a straight segment of h "
                              "hops meets on the wafer (a bound), or the mean over every start (a typical route)",
                              &DefectParams::detour_charge);
}

config::ParamTable<SpareParams> spare_table() {
  return config::ParamTable<SpareParams>()
      .add(int_param("hardware.spares.rows", "rows", "0", 0, 10000, "Spare rows per wafer beyond grid_height"),
           &SpareParams::rows)
      .add(int_param("hardware.spares.columns", "columns", "0", 0, 10000, "Spare columns per wafer beyond grid_width"),
           &SpareParams::columns)
      .add_enum<RepairScheme>("hardware.spares.scheme",
                              {{"lines", RepairScheme::Lines}, {"shift", RepairScheme::Shift}}, "lines",
                              "How the spares replace dead tiles: whole rows and columns skipped, or each row "
                              "shifted by one position past each of its dead tiles into the spare columns",
                              &SpareParams::scheme);
}

const config::ParamTable<HardwareSpec>& hardware_table() {
  static const config::ParamTable<HardwareSpec> table =
      config::ParamTable<HardwareSpec>()
          .add(int_param("hardware.grid_width", "tiles", std::nullopt, 1, 100000, "Tiles per wafer in x"),
               &HardwareSpec::grid_width)
          .add(int_param("hardware.grid_height", "tiles", std::nullopt, 1, 100000, "Tiles per wafer in y"),
               &HardwareSpec::grid_height)
          .add(config::float_param("hardware.clock_ghz", "GHz", std::nullopt, 0.01, 10,
                                   "Core and fabric clock; converts cycles to time at the output only"),
               &HardwareSpec::clock_ghz)
          .add(config::as_type(config::ParamType::IntOrAuto,
                               int_param("hardware.wafers", "wafers", "auto", 1, 1024,
                                         "Wafers joined by off-wafer links; auto = the fewest the model fits on")),
               &HardwareSpec::wafers)
          .add_table(tile_table(), &HardwareSpec::tile)
          .add_table(fabric_table(), &HardwareSpec::fabric)
          .add_table(offwafer_table(), &HardwareSpec::offwafer)
          .add_table(energy_table(), &HardwareSpec::energy)
          .add_table(defect_table(), &HardwareSpec::defects)
          .add_table(spare_table(), &HardwareSpec::spares);
  return table;
}

// Reads the defects each wafer's logical grid is built around (the wafers are
// repaired as the compiler asks for them); a map file is read here, once.
void repair_defects(const config::Config& config, HardwareSpec& spec) {
  if (!spec.defects.map_file.empty() && (spec.defects.tile_failure_rate > 0 || spec.defects.link_failure_rate > 0))
    config.fail_given({kDefectMap, kTileFailureRate, kLinkFailureRate},
                      "a defect map and failure rates are two sources of defects: give one");
  std::error_code error;
  if (!spec.defects.map_file.empty() && !std::filesystem::is_regular_file(spec.defects.map_file, error))
    config.fail(kDefectMap, "cannot read the defect map " + spec.defects.map_file);
  const uint32_t width = spec.grid_width + spec.spares.columns, height = spec.grid_height + spec.spares.rows;
  std::optional<DefectMap> map;
  if (!spec.defects.map_file.empty()) map = read_defect_map(spec.defects.map_file, width, height);
  spec.repairs = std::make_shared<const WaferRepairs>(spec.defects, spec.spares, spec.grid_width, spec.grid_height,
                                                      std::move(map));
}

}  // namespace

void declare_hardware_params(config::Schema& schema) { hardware_table().declare(schema); }

const config::Schema& hardware_schema() {
  static const config::Schema schema{declare_hardware_params};
  return schema;
}

config::Config load_hardware_config(const std::string& name, const std::vector<std::string>& overrides,
                                    const std::string& origin) {
  config::LoadOptions options;
  options.presets["hardware"] = &embedded_hardware_presets();
  options.overrides = overrides;
  return config::load_string(hardware_schema(), "hardware: " + config::yaml_scalar(name) + "\n", origin, options);
}

HardwareSpec hardware_from_config(const config::Config& config) {
  HardwareSpec spec = hardware_table().read(config);
  spec.name = config.preset("hardware").empty() ? "custom" : config.preset("hardware");
  if (spec.tile.runtime_reserved_bytes >= spec.tile.sram_bytes)
    config.fail_given({kSramBytes, kRuntimeReservedBytes}, "runtime reserve (" +
                                                               std::to_string(spec.tile.runtime_reserved_bytes) +
                                                               " bytes) must be less than the tile's SRAM (" +
                                                               std::to_string(spec.tile.sram_bytes) + " bytes)");
  if (spec.fabric.colors_reserved >= spec.fabric.colors)
    config.fail_given({kColors, kColorsReserved}, std::to_string(spec.fabric.colors_reserved) +
                                                      " reserved colors leave none of the " +
                                                      std::to_string(spec.fabric.colors) + " colors for routes");
  if (spec.defects.any()) repair_defects(config, spec);
  return spec;
}

}  // namespace wafersim
