// Hardware presets against the published figures of docs/HARDWARE.md, and the cross-field checks.
#include <catch2/catch.hpp>

#include "models/hardware.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/sim_options.h"
#include "tests/models/config_fixture.h"

using namespace wafersim;
using config::testing::load_error;

namespace {

const config::Schema& hardware_and_sim_schema() {
  static const config::Schema schema{declare_hardware_params, declare_sim_params};
  return schema;
}

config::Config load_hardware(const std::string& text, std::vector<std::string> overrides = {}) {
  config::LoadOptions options;
  options.overrides = std::move(overrides);
  options.presets["hardware"] = &embedded_hardware_presets();
  return config::load_string(hardware_and_sim_schema(), text, "exp.yaml", options);
}

std::string hardware_error(const std::string& text, std::vector<std::string> overrides = {}) {
  try {
    hardware_from_config(load_hardware(text, std::move(overrides)));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("wse3 preset holds the published figures", "[hardware][preset]") {
  const HardwareSpec hw = hardware_from_config(load_hardware("hardware: wse3\n"));
  CHECK(hw.name == "wse3");
  CHECK(hw.grid_width == 762);
  CHECK(hw.grid_height == 1176);
  CHECK(hw.tiles_per_wafer() == 896112);  // 762 x 1176, Cerebras SDK docs
  CHECK(hw.clock_ghz == 1.1);
  CHECK(hw.wafers == 0);  // auto
  CHECK(hw.tile.sram_bytes == 48 * 1024);
  CHECK(hw.usable_sram_bytes() == 44976);  // 49,152 - 4,176 runtime footprint
  CHECK(hw.tile.fmac_per_cycle_16bit == 8);
  CHECK(hw.tile.fmac_per_cycle_8bit == 16);
  CHECK(hw.fabric.link_bytes_per_cycle == 4);  // one 32-bit wavelet per cycle
  CHECK(hw.fabric.colors == 24);
  CHECK(hw.fabric.colors_reserved == 3);
  // 1.2 Tb/s = 150e9 B/s; at 1.1e9 cycles/s that is 136.4 B/cycle.
  CHECK(hw.offwafer.bytes_per_cycle == uint32_t(1.2e12 / 8 / 1.1e9));
  CHECK(hw.offwafer.latency_cycles == 1100);  // 1 us at 1.1 GHz
  CHECK(hw.cycles_to_us(1100) == Approx(1.0));
}

TEST_CASE("wse2 and tiny presets", "[hardware][preset]") {
  const HardwareSpec wse2 = hardware_from_config(load_hardware("hardware: wse2\n"));
  CHECK(wse2.tiles_per_wafer() == 753972);  // 757 x 996
  CHECK(wse2.tile.fmac_per_cycle_16bit == 4);
  CHECK(wse2.tile.sram_read_bytes_per_cycle == 16);
  CHECK(wse2.tile.sram_write_bytes_per_cycle == 8);
  const HardwareSpec tiny = hardware_from_config(load_hardware("hardware: tiny\n"));
  CHECK(tiny.grid_width == 16);
  CHECK(tiny.grid_height == 16);
  CHECK(tiny.tile.sram_bytes == 49152);
}

TEST_CASE("the SDK-clock variants differ from their presets in the clock and what is stated per second only",
          "[hardware][preset]") {
  for (const char* name : {"wse2", "wse3"}) {
    INFO(name);
    const HardwareSpec base = hardware_from_config(load_hardware(std::string("hardware: ") + name + "\n"));
    const HardwareSpec variant = hardware_from_config(load_hardware(std::string("hardware: ") + name + "-sdk-clock\n"));
    CHECK(variant.clock_ghz == 0.85);  // Cerebras/csl-examples benchmark scripts
    // 1.2 Tb/s and 1 us, re-derived at 0.85 GHz.
    CHECK(variant.offwafer.bytes_per_cycle == uint32_t(1.2e12 / 8 / 0.85e9));
    CHECK(variant.offwafer.latency_cycles == 850);
    CHECK(variant.cycles_to_us(variant.offwafer.latency_cycles) ==
          Approx(base.cycles_to_us(base.offwafer.latency_cycles)));
    // Everything stated per cycle is the preset's.
    CHECK(variant.grid_width == base.grid_width);
    CHECK(variant.grid_height == base.grid_height);
    CHECK(variant.tile.fmac_per_cycle_16bit == base.tile.fmac_per_cycle_16bit);
    CHECK(variant.tile.fmac_per_cycle_8bit == base.tile.fmac_per_cycle_8bit);
    CHECK(variant.fabric.hop_latency_cycles == base.fabric.hop_latency_cycles);
    CHECK(variant.tile.sram_bytes == base.tile.sram_bytes);
  }
}

TEST_CASE("no preset restates a declared default", "[hardware][preset]") {
  // A default lives in one place, the schema; a preset states only what differs from it.
  for (const EmbeddedFile& preset : embedded_hardware_presets()) {
    INFO(preset.path);
    const config::Config config = load_hardware_config(preset.name);
    for (const config::ParamSpec& spec : hardware_schema().params()) {
      INFO(spec.path);
      CHECK_FALSE((config.entries().at(spec.path).from_preset && config.is_default(spec.path)));
    }
  }
}

TEST_CASE("grid and clock are required; the rest defaults to wse3", "[hardware]") {
  CHECK_THAT(hardware_error("hardware: {grid_width: 8, grid_height: 8}\n"),
             Catch::Contains("missing required value hardware.clock_ghz"));
  const HardwareSpec hw =
      hardware_from_config(load_hardware("hardware: {grid_width: 8, grid_height: 4, clock_ghz: 1}\n"));
  const HardwareSpec wse3 = hardware_from_config(load_hardware("hardware: wse3\n"));
  CHECK(hw.name == "custom");
  CHECK(hw.tiles_per_wafer() == 32);
  CHECK(hw.tile.runtime_reserved_bytes == wse3.tile.runtime_reserved_bytes);
  CHECK(hw.fabric.relay_cycles == wse3.fabric.relay_cycles);
  CHECK(hw.offwafer.bytes_per_cycle == wse3.offwafer.bytes_per_cycle);
}

TEST_CASE("overrides of a preset keep its name", "[hardware]") {
  const HardwareSpec hw = hardware_from_config(
      load_hardware("hardware:\n  preset: wse3\n  fabric: {hop_latency_cycles: 2}\n", {"hardware.wafers=4"}));
  CHECK(hw.name == "wse3");
  CHECK(hw.fabric.hop_latency_cycles == 2);
  CHECK(hw.wafers == 4);
}

TEST_CASE("cross-field checks blame the value set last", "[hardware]") {
  CHECK(hardware_error("hardware:\n  preset: tiny\n  tile: {sram_bytes: 4096}\n") ==
        "exp.yaml:3:22: hardware.tile.sram_bytes: runtime reserve (4176 bytes) must be less than the tile's SRAM (4096 "
        "bytes)");
  CHECK(
      hardware_error("hardware: tiny\n", {"hardware.fabric.colors_reserved=24"}) ==
      "--set hardware.fabric.colors_reserved=24: hardware.fabric.colors_reserved: 24 reserved colors leave none of the "
      "24 colors for routes");
  CHECK(hardware_error("hardware: {grid_width: 8, grid_height: 8, clock_ghz: 1, fabric: {colors: 2}}\n") ==
        "exp.yaml:1:74: hardware.fabric.colors: 3 reserved colors leave none of the 2 colors for routes");
}

TEST_CASE("the hardware range checks the issue names", "[hardware]") {
  CHECK_THAT(hardware_error("hardware: tiny\n", {"hardware.grid_width=0"}), Catch::Contains("out of range"));
  CHECK_THAT(hardware_error("hardware: tiny\n", {"hardware.clock_ghz=0"}), Catch::Contains("out of range"));
  CHECK_THAT(hardware_error("hardware: tiny\n", {"hardware.clock_ghz=-1"}), Catch::Contains("out of range"));
  CHECK_THAT(hardware_error("hardware: tiny\n", {"hardware.fabric.colors=33"}),
             Catch::Contains("allowed [1, 32] colors"));
  CHECK_THAT(hardware_error("hardware: tiny\n", {"hardware.tile.sram_bytes=-1"}), Catch::Contains("out of range"));
}

TEST_CASE("sim options: defaults and values", "[sim_options]") {
  const SimOptions defaults = sim_options_from_config(load_hardware("hardware: tiny\n"));
  CHECK(defaults.contention);
  CHECK(defaults.bands == 0);
  CHECK(defaults.progress_seconds == 2.0);
  const SimOptions set = sim_options_from_config(
      load_hardware("hardware: tiny\nsim: {contention: false, bands: 16, progress_seconds: 0.5}\n"));
  CHECK_FALSE(set.contention);
  CHECK(set.bands == 16);
  CHECK(set.progress_seconds == 0.5);
}

TEST_CASE("the experiment schema declares hardware and sim parameters", "[hardware]") {
  const config::Schema& schema = experiment_schema();
  for (const config::ParamSpec& spec : hardware_and_sim_schema().params()) {
    INFO(spec.path);
    REQUIRE(schema.find(spec.path) != nullptr);
  }
}
