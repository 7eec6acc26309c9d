#include "sim/cli/heatmaps.h"

#include <nlohmann/json.hpp>

#include "mapping/tile_sram.h"
#include "models/energy.h"
#include "models/program_events.h"
#include "models/wafer_repairs.h"
#include "sim/cli/npy.h"
#include "sim/reports/output.h"
#include "workloads/decode_inputs.h"

namespace wafersim::cli {

using reports::make_folder;
using reports::write_text_atomically;

namespace {

const char* const kDirections[4] = {"east", "west", "south", "north"};

class HeatmapWriter {
 public:
  HeatmapWriter(const std::string& folder, const mapping::Plan& plan)
      : folder_(folder),
        wafers_(plan.programs.wafers),
        width_(plan.programs.grid_width),
        height_(plan.programs.grid_height) {}

  // One file per wafer of `values` (every tile of every wafer, tile id order).
  template <typename T>
  void add(const std::string& quantity, const std::string& unit, const std::string& description,
           const std::vector<T>& values) {
    nlohmann::json files = nlohmann::json::array();
    const size_t per_wafer = size_t(width_) * height_;
    for (uint32_t wafer = 0; wafer < wafers_; ++wafer) {
      const auto first = values.begin() + std::ptrdiff_t(wafer * per_wafer);
      files.push_back(
          write(wafer, quantity, std::vector<T>(first, first + std::ptrdiff_t(per_wafer)), height_, width_));
    }
    arrays_.push_back({{"quantity", quantity}, {"unit", unit}, {"description", description}, {"files", files}});
  }

  // Each repaired wafer's physical grid, one file each, and where its logical grid landed.
  nlohmann::json physical_grid(const WaferRepairs& repairs) const {
    nlohmann::json files = nlohmann::json::array(), wafers = nlohmann::json::array();
    uint32_t width = 0, height = 0;
    for (uint32_t w = 0; w < wafers_; ++w) {
      const WaferRepair& repair = repairs.wafer(w);
      width = repair.defects.width, height = repair.defects.height;
      std::vector<int32_t> states;
      for (PhysicalTile tile : physical_tiles(repair)) states.push_back(int32_t(tile));
      files.push_back(write(w, "physical_tile", states, height, width));
      nlohmann::json wafer = {{"logical_columns", repair.column_of}, {"logical_rows", repair.row_of}};
      if (repair.scheme == RepairScheme::Shift) {
        // Rows that skip tiles: [logical row, [physical columns skipped]]; the others keep logical_columns.
        nlohmann::json skips = nlohmann::json::array();
        for (uint32_t y = 0; y < repair.row_skips.size(); ++y)
          if (!repair.row_skips[y].empty()) skips.push_back({y, repair.row_skips[y]});
        wafer["row_skips"] = std::move(skips);
      }
      wafers.push_back(std::move(wafer));
    }
    const nlohmann::json array = {
        {"quantity", "physical_tile"},
        {"unit", "category"},
        {"description",
         "what each tile of the physical grid (the logical grid and its spares) became in the repair: the "
         "category's index in categories"},
        {"categories", kPhysicalTileNames},
        {"files", files}};
    return {{"width_tiles", width},
            {"height_tiles", height},
            {"wafers", std::move(wafers)},
            {"arrays", nlohmann::json::array({array})}};
  }

  nlohmann::json arrays() const { return arrays_; }

 private:
  template <typename T>
  std::string write(uint32_t wafer, const std::string& quantity, const std::vector<T>& values, uint64_t height,
                    uint64_t width) const {
    const std::string name = "wafer" + std::to_string(wafer) + "_" + quantity + ".npy";
    write_text_atomically(folder_ + "/" + name, npy_bytes(values, {height, width}));
    return name;
  }

  std::string folder_;
  uint32_t wafers_;
  uint64_t width_, height_;
  nlohmann::json arrays_ = nlohmann::json::array();
};

std::vector<double> fractions(const std::vector<uint64_t>& cycles, uint64_t end_cycle) {
  std::vector<double> out(cycles.size(), 0.0);
  if (end_cycle == 0) return out;
  for (size_t i = 0; i < cycles.size(); ++i) out[i] = double(cycles[i]) / double(end_cycle);
  return out;
}

nlohmann::json regions_json(const mapping::Plan& plan) {
  nlohmann::json regions = nlohmann::json::array();
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const mapping::Region& region = plan.regions[r];
    regions.push_back({{"id", r},
                       {"name", region.name},
                       {"wafer", region.box.wafer},
                       {"x", region.box.x0},
                       {"y", region.box.y0},
                       {"width_tiles", region.box.width_x()},
                       {"height_tiles", region.box.height_y()}});
  }
  return regions;
}

}  // namespace

void write_heatmaps(const std::string& folder, const mapping::Plan& plan, const backend::TileFigures* tiles) {
  make_folder(folder);
  HeatmapWriter writer(folder, plan);
  {
    mapping::SramGrid sram = mapping::sram_grid(plan);
    writer.add("region_id", "id", "index of the region in heatmaps.json's regions; -1: a tile no region uses",
               sram.region);
    std::vector<uint64_t> used(sram.region.size(), 0);
    for (size_t tile = 0; tile < used.size(); ++tile)
      if (sram.region[tile] >= 0)
        used[tile] = plan.hw.tile.runtime_reserved_bytes + sram.weights[tile] + sram.kv[tile] + sram.activations[tile];
    writer.add("sram_used_bytes", "bytes",
               "SRAM in use: runtime reserve, weights, KV cache and buffers (0 on a tile no region uses)", used);
    used = {};
    writer.add("sram_weights_bytes", "bytes", "weights and biases, in their formats", sram.weights);
    writer.add("sram_kv_bytes", "bytes", "KV cache at the workload's largest context (prompt + decoded tokens)",
               sram.kv);
    writer.add("sram_buffers_bytes", "bytes", "activation buffers, a region root's stream buffer included",
               sram.activations);
  }
  {
    // Counted from the programs, as metrics.energy is: so `map` has it too.
    const workloads::DecodeInputs inputs(plan.model, plan.workload);
    const std::vector<EventCounts> events =
        ProgramEvents(plan.programs, plan.hw.fabric.detours.get()).per_tile(0, plan.programs.iterations, inputs);
    std::vector<double> joules(events.size(), 0.0);
    for (size_t tile = 0; tile < events.size(); ++tile)
      joules[tile] = dynamic_energy(plan.hw.energy, events[tile]).total();
    writer.add("decode_energy_joules", "J",
               "energy of the tile's events over the decode: multiply-adds, SRAM, the links its messages cross and "
               "off-wafer bytes (static power, the same on every tile, excluded)",
               joules);
  }
  if (tiles) {
    writer.add("compute_busy_fraction", "fraction of the run",
               "cycles the tile computed over the decode's cycles (the last tile's end)",
               fractions(tiles->compute_busy_cycles, tiles->end_cycle));
    for (size_t d = 0; d < 4; ++d)
      if (!tiles->link_busy_cycles[d].empty())
        writer.add(std::string("link_busy_fraction_") + kDirections[d], "fraction of the run",
                   std::string("cycles the link from this tile's router to its ") + kDirections[d] +
                       " neighbour carried a message, over the decode's cycles (0 where no link leaves the wafer)",
                   fractions(tiles->link_busy_cycles[d], tiles->end_cycle));
  }
  nlohmann::json index = {{"source", tiles ? "run" : "plan"},
                          {"model", plan.model.name},
                          {"hardware", plan.hw.name},
                          {"wafers", plan.programs.wafers},
                          {"width_tiles", plan.programs.grid_width},
                          {"height_tiles", plan.programs.grid_height},
                          {"sram_capacity_bytes", plan.hw.tile.sram_bytes},
                          {"runtime_reserved_bytes", plan.hw.tile.runtime_reserved_bytes},
                          {"end_cycle", tiles ? nlohmann::json(tiles->end_cycle) : nlohmann::json(nullptr)},
                          {"regions", regions_json(plan)},
                          {"arrays", writer.arrays()}};
  if (plan.hw.repairs) index["physical_grid"] = writer.physical_grid(*plan.hw.repairs);
  write_text_atomically(folder + "/heatmaps.json", index.dump(2) + "\n");
}

}  // namespace wafersim::cli
