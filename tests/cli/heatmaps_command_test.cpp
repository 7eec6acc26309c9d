// `run --heatmaps` and `map --heatmaps`: the .npy arrays of every wafer,
// checked against the means and totals the same run and plan report.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";
const std::string kTinyMoe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";

// A .npy file read by its own header, as numpy.load would: version 1.0, C order, little-endian.
struct Npy {
  std::string descr;
  std::vector<uint64_t> shape;
  std::vector<double> values;  // every element, converted
};

Npy read_npy(const std::filesystem::path& path) {
  const std::string bytes = read_all(path);
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  REQUIRE(bytes[6] == 1);
  const size_t header_length = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
  const std::string header = bytes.substr(10, header_length);
  CHECK((10 + header_length) % 64 == 0);
  CHECK(header.back() == '\n');
  CHECK(header.find("'fortran_order': False") != std::string::npos);
  Npy npy;
  const size_t descr = header.find("'descr': '") + 10;
  npy.descr = header.substr(descr, 3);
  const size_t open = header.find("'shape': (") + 10, close = header.find(')', open);
  std::string dims = header.substr(open, close - open);
  for (size_t at = 0; at < dims.size();) {
    const size_t comma = dims.find(',', at);
    const std::string dim = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (dim.find_first_not_of(' ') != std::string::npos) npy.shape.push_back(std::stoull(dim));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const uint64_t count = std::accumulate(npy.shape.begin(), npy.shape.end(), uint64_t(1), std::multiplies<>());
  const size_t size = npy.descr == "<i4" ? 4 : 8;
  REQUIRE(bytes.size() == 10 + header_length + count * size);
  const char* data = bytes.data() + 10 + header_length;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    for (size_t b = 0; b < size; ++b) bits |= uint64_t(uint8_t(data[i * size + b])) << (8 * b);
    if (npy.descr == "<f8") {
      double value = 0;
      std::memcpy(&value, &bits, sizeof value);
      npy.values.push_back(value);
    } else if (npy.descr == "<u8") {
      npy.values.push_back(double(bits));
    } else {
      REQUIRE(npy.descr == "<i4");
      npy.values.push_back(double(int32_t(uint32_t(bits))));
    }
  }
  return npy;
}

// Every array of a --heatmaps folder, all wafers end to end, checked for shape
// (grid height x width per wafer) and one file per wafer on the way.
std::map<std::string, std::vector<double>> read_arrays(const std::filesystem::path& folder, const json& index) {
  std::map<std::string, std::vector<double>> arrays;
  const uint64_t wafers = index["wafers"], height = index["height_tiles"], width = index["width_tiles"];
  for (const json& array : index["arrays"]) {
    const std::string quantity = array["quantity"];
    INFO(quantity);
    REQUIRE(array["files"].size() == wafers);
    for (const json& file : array["files"]) {
      const Npy npy = read_npy(folder / file.get<std::string>());
      CHECK(npy.shape == std::vector<uint64_t>{height, width});
      arrays[quantity].insert(arrays[quantity].end(), npy.values.begin(), npy.values.end());
    }
  }
  return arrays;
}

double sum(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

}  // namespace

TEST_CASE("run --heatmaps writes every wafer's arrays, and their means are the reported ones", "[cli][heatmaps]") {
  Scratch scratch;
  const std::filesystem::path folder = scratch.path() / "maps";
  const std::string result_path = (scratch.path() / "result.json").string();
  const Outcome outcome = run_wafersim({"run", kTinyDense, "--quiet", "--set", "sim.contention=true", "--set",
                                        "hardware.wafers=2", "--json", result_path, "--heatmaps", folder.string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json result = json::parse(read_all(result_path));
  const json index = json::parse(read_all(folder / "heatmaps.json"));
  CHECK(index["source"] == "run");
  CHECK(index["wafers"] == 2);
  const uint64_t tiles = uint64_t(index["wafers"]) * uint64_t(index["width_tiles"]) * uint64_t(index["height_tiles"]);
  CHECK(result["sim"]["tiles_simulated"] == tiles);

  const auto arrays = read_arrays(folder, index);
  for (const char* quantity :
       {"region_id", "sram_used_bytes", "sram_weights_bytes", "sram_kv_bytes", "sram_buffers_bytes",
        "compute_busy_fraction", "link_busy_fraction_east", "link_busy_fraction_west", "link_busy_fraction_south",
        "link_busy_fraction_north", "decode_energy_joules"})
    CHECK(arrays.count(quantity) == 1);

  // The tiles' energy adds up to the decode's dynamic energy (static power is the same on every tile).
  double tile_joules = 0;
  for (double joules : arrays.at("decode_energy_joules")) tile_joules += joules;
  const json& parts = result["metrics"]["energy"]["breakdown"];
  CHECK(tile_joules > 0);
  CHECK(tile_joules == Approx(parts["compute"].get<double>() + parts["sram"].get<double>() +
                              parts["fabric"].get<double>() + parts["offwafer"].get<double>()));

  // Tiles with a program are the tiles of some region; compute is busy only there.
  const std::vector<double>& region = arrays.at("region_id");
  const std::vector<double>& compute = arrays.at("compute_busy_fraction");
  size_t used = 0;
  for (size_t tile = 0; tile < tiles; ++tile) {
    if (region[tile] >= 0) ++used;
    if (region[tile] < 0) CHECK(compute[tile] == 0);
  }
  REQUIRE(used > 0);
  CHECK(sum(compute) / double(used) == Approx(result["utilization"]["compute"]["mean"].get<double>()).epsilon(1e-12));
  CHECK(*std::max_element(compute.begin(), compute.end()) ==
        Approx(result["utilization"]["compute"]["peak"].get<double>()).epsilon(1e-12));
  // Directed links that exist: (width - 1) per row each way, (height - 1) per column and wafer each way.
  const double width = index["width_tiles"], height = index["height_tiles"], wafers = index["wafers"];
  const double links = 2 * wafers * height * (width - 1) + 2 * wafers * width * (height - 1);
  double link_sum = 0, link_peak = 0;
  for (const char* direction : {"east", "west", "south", "north"}) {
    const std::vector<double>& busy = arrays.at(std::string("link_busy_fraction_") + direction);
    link_sum += sum(busy);
    link_peak = std::max(link_peak, *std::max_element(busy.begin(), busy.end()));
  }
  CHECK(link_sum > 0);
  CHECK(link_sum / links == Approx(result["utilization"]["links"]["mean"].get<double>()).epsilon(1e-12));
  CHECK(link_peak == Approx(result["utilization"]["links"]["peak"].get<double>()).epsilon(1e-12));
  // The links leaving the grid's edge never carry anything.
  for (size_t tile = 0; tile < tiles; ++tile) {
    const size_t x = tile % size_t(width), y = tile / size_t(width) % size_t(height);
    if (x + 1 == size_t(width)) CHECK(arrays.at("link_busy_fraction_east")[tile] == 0);
    if (x == 0) CHECK(arrays.at("link_busy_fraction_west")[tile] == 0);
    if (y + 1 == size_t(height)) CHECK(arrays.at("link_busy_fraction_south")[tile] == 0);
    if (y == 0) CHECK(arrays.at("link_busy_fraction_north")[tile] == 0);
  }
  // SRAM in use over used tiles is the plan's mean, which rounds down to a byte
  // twice (each region's mean, then the mean over regions): within 2 bytes.
  const double capacity = index["sram_capacity_bytes"];
  const std::vector<double>& sram = arrays.at("sram_used_bytes");
  CHECK(sum(sram) / double(used) / capacity ==
        Approx(result["utilization"]["sram_capacity"]["mean"].get<double>()).margin(2.0 / capacity));
  CHECK(*std::max_element(sram.begin(), sram.end()) / capacity ==
        Approx(result["utilization"]["sram_capacity"]["peak"].get<double>()).epsilon(1e-12));
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("map --heatmaps draws the plan alone: SRAM by kind adds up to the regions' totals", "[cli][heatmaps]") {
  Scratch scratch;
  const std::filesystem::path folder = scratch.path() / "plan-maps";
  const std::string plan_path = (scratch.path() / "plan.json").string();
  // An old file of the same name is replaced.
  std::filesystem::create_directories(folder);
  scratch.write("plan-maps/wafer0_region_id.npy", "old");
  const Outcome outcome =
      run_wafersim({"map", kTinyMoe, "--quiet", "--json", plan_path, "--heatmaps", folder.string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json plan = json::parse(read_all(plan_path));
  const json index = json::parse(read_all(folder / "heatmaps.json"));
  CHECK(index["source"] == "plan");
  CHECK(index["end_cycle"].is_null());
  CHECK(index["wafers"] == plan["wafers"]);
  CHECK(plan["wafers"] == 2);  // every wafer gets its files
  const auto arrays = read_arrays(folder, index);
  CHECK(arrays.size() == 6);  // region ids, SRAM and the energy the programs imply; no busy fractions
  CHECK(arrays.count("decode_energy_joules") == 1);
  CHECK(arrays.count("compute_busy_fraction") == 0);

  const json& regions = plan["regions"];
  REQUIRE(index["regions"].size() == regions.size());
  std::vector<double> weights(regions.size()), kv(regions.size()), tiles(regions.size()), used(regions.size()),
      peak(regions.size());
  const std::vector<double>& region = arrays.at("region_id");
  for (size_t tile = 0; tile < region.size(); ++tile) {
    if (region[tile] < 0) continue;
    const size_t r = size_t(region[tile]);
    weights[r] += arrays.at("sram_weights_bytes")[tile];
    kv[r] += arrays.at("sram_kv_bytes")[tile];
    tiles[r] += 1;
    const double tile_used = arrays.at("sram_used_bytes")[tile];
    CHECK(tile_used == double(index["runtime_reserved_bytes"]) + arrays.at("sram_weights_bytes")[tile] +
                           arrays.at("sram_kv_bytes")[tile] + arrays.at("sram_buffers_bytes")[tile]);
    used[r] += tile_used;
    peak[r] = std::max(peak[r], tile_used);
  }
  for (size_t r = 0; r < regions.size(); ++r) {
    INFO(regions[r]["name"]);
    CHECK(index["regions"][r]["name"] == regions[r]["name"]);
    CHECK(tiles[r] == regions[r]["tiles"].get<double>());
    CHECK(weights[r] == regions[r]["weight_bytes"].get<double>());
    CHECK(kv[r] == regions[r]["kv_bytes"].get<double>());
    CHECK(uint64_t(used[r]) / uint64_t(tiles[r]) == regions[r]["sram_mean_bytes"].get<uint64_t>());
    CHECK(peak[r] == regions[r]["sram_peak_bytes"].get<double>());
  }
}

TEST_CASE("map --heatmaps draws a repaired wafer's physical grid, and nothing more on a perfect wafer",
          "[cli][heatmaps][defects]") {
  Scratch scratch;
  const std::filesystem::path folder = scratch.path() / "maps";
  const std::string plan_path = (scratch.path() / "plan.json").string();
  // Three spare rows and columns of which the four defects' lines take four: two stay unused.
  const Outcome outcome =
      run_wafersim({"map", kTinyDense, "--quiet", "--json", plan_path, "--heatmaps", folder.string(), "--set",
                    "hardware.spares.rows=3", "--set", "hardware.spares.columns=3", "--set",
                    "hardware.defects.map=" + std::string(WAFERSIM_TEST_DATA) + "/defects/tiny-map.yaml"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json defects = json::parse(read_all(plan_path))["defects"];
  const json index = json::parse(read_all(folder / "heatmaps.json"));
  CHECK(read_arrays(folder, index).size() == 6);  // the logical grid's arrays as on a perfect wafer
  const json& physical = index["physical_grid"];
  const uint64_t width = physical["width_tiles"], height = physical["height_tiles"];
  CHECK(json({width, height}) == defects["physical_grid"]);
  CHECK(width == 19);
  REQUIRE(physical["arrays"].size() == 1);
  const json& array = physical["arrays"][0];
  CHECK(array["quantity"] == "physical_tile");
  CHECK(array["categories"] == json({"logical tile", "dead tile", "dead link", "retired", "unused spare"}));
  REQUIRE(array["files"] == json({"wafer0_physical_tile.npy"}));
  const Npy npy = read_npy(folder / "wafer0_physical_tile.npy");
  CHECK(npy.descr == "<i4");
  REQUIRE(npy.shape == std::vector<uint64_t>{height, width});

  // Every tile's category, from the map file and the plan's retired lines.
  enum { kLogical, kDeadTile, kDeadLink, kRetired, kUnusedSpare };
  const std::vector<std::pair<uint64_t, uint64_t>> dead = {{3, 5}, {11, 9}, {12, 17}}, dead_link = {{7, 14}};
  const auto listed = [](const json& list, uint64_t line) {
    return std::find(list.begin(), list.end(), json(line)) != list.end();
  };
  std::vector<double> expected(width * height, kUnusedSpare);
  for (uint64_t y = 0; y < height; ++y)
    for (uint64_t x = 0; x < width; ++x) {
      double& tile = expected[y * width + x];
      if (std::find(dead.begin(), dead.end(), std::make_pair(x, y)) != dead.end())
        tile = kDeadTile;
      else if (std::find(dead_link.begin(), dead_link.end(), std::make_pair(x, y)) != dead_link.end())
        tile = kDeadLink;
      else if (listed(defects["wafers"][0]["retired_rows"], y) || listed(defects["wafers"][0]["retired_columns"], x))
        tile = kRetired;
      else if (listed(physical["wafers"][0]["logical_columns"], x) && listed(physical["wafers"][0]["logical_rows"], y))
        tile = kLogical;
    }
  CHECK(npy.values == expected);
  CHECK(std::count(npy.values.begin(), npy.values.end(), kLogical) == 16 * 16);
  CHECK(std::count(npy.values.begin(), npy.values.end(), kUnusedSpare) > 0);
  CHECK(npy.values[5 * width + 3] == kDeadTile);
  CHECK(npy.values[14 * width + 7] == kDeadLink);
  // The logical grid's columns and rows are the physical ones the repair kept, in order.
  const json& logical = physical["wafers"][0];
  CHECK(logical["logical_columns"].size() == 16);
  CHECK(logical["logical_rows"].size() == 16);
  CHECK(std::is_sorted(logical["logical_columns"].begin(), logical["logical_columns"].end()));

  // A perfect wafer: no physical grid, in the index or in the folder.
  const std::filesystem::path perfect = scratch.path() / "perfect";
  REQUIRE(run_wafersim({"map", kTinyDense, "--quiet", "--heatmaps", perfect.string()}).exit_code == 0);
  CHECK_FALSE(json::parse(read_all(perfect / "heatmaps.json")).contains("physical_grid"));
  CHECK_FALSE(std::filesystem::exists(perfect / "wafer0_physical_tile.npy"));
  CHECK(std::distance(std::filesystem::directory_iterator(perfect), {}) == 7);  // six arrays and the index
}

TEST_CASE("map --heatmaps lists the rows the shift scheme shifted and draws their tiles", "[cli][heatmaps][defects]") {
  Scratch scratch;
  const std::filesystem::path folder = scratch.path() / "maps";
  const Outcome outcome =
      run_wafersim({"map", kTinyDense, "--quiet", "--heatmaps", folder.string(), "--set", "hardware.spares.rows=2",
                    "--set", "hardware.spares.columns=2", "--set", "hardware.spares.scheme=shift", "--set",
                    "hardware.defects.map=" + std::string(WAFERSIM_TEST_DATA) + "/defects/tiny-map.yaml"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  const json physical = json::parse(read_all(folder / "heatmaps.json"))["physical_grid"];
  // Logical rows 5, 9 and 14 skip the dead tile (3, 5), (11, 9) and the tile (7, 14) that lost its link.
  CHECK(physical["wafers"][0]["row_skips"] == json::parse("[[5, [3]], [9, [11]], [14, [7]]]"));
  const Npy npy = read_npy(folder / "wafer0_physical_tile.npy");
  REQUIRE(npy.shape == std::vector<uint64_t>{18, 18});
  enum { kLogical, kDeadTile, kDeadLink, kRetired, kUnusedSpare };
  auto at = [&](uint64_t x, uint64_t y) { return npy.values[y * 18 + x]; };
  // A shifted row holds its 16 logical tiles on the 17 live tiles up to column 16; one without a skip on 0..15.
  CHECK(at(3, 5) == kDeadTile);
  CHECK(at(16, 5) == kLogical);
  CHECK(at(17, 5) == kUnusedSpare);
  CHECK(at(7, 14) == kDeadLink);
  CHECK(at(16, 4) == kUnusedSpare);
  CHECK(at(15, 4) == kLogical);
  CHECK(at(12, 17) == kDeadTile);  // in a spare row the grid does not reach
  CHECK(std::count(npy.values.begin(), npy.values.end(), kLogical) == 16 * 16);
  CHECK(std::count(npy.values.begin(), npy.values.end(), kRetired) == 0);
}

TEST_CASE("an output path that cannot be written fails before the simulation, naming it", "[cli][heatmaps][output]") {
  Scratch scratch;
  const std::string missing = (scratch.path() / "no-such-folder" / "out").string();
  const std::string a_file = scratch.write("a-file", "text");
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--heatmaps", missing}, {"run", "--csv", missing},
      {"analytic", "--csv", missing}, {"run", "--trace", missing},
      {"run", "--heatmaps", a_file},  {"map", "--heatmaps", missing},
      {"run", "--json", missing},     {"run", "--trace", scratch.path().string()}};
  for (const auto& args : cases) {
    INFO(args[0] << " " << args[1] << " " << args[2]);
    // Not --quiet: the table printed after the simulation must not appear.
    const Outcome outcome = run_wafersim({args[0], kTinyDense, args[1], args[2]});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK(outcome.err.find(args[2]) != std::string::npos);
    CHECK(outcome.out.empty());
  }
  CHECK_FALSE(std::filesystem::exists(scratch.path() / "no-such-folder"));
  CHECK(read_all(a_file) == "text");
  // Only the file written above is there: no probe or temporary was left.
  CHECK(std::distance(std::filesystem::directory_iterator(scratch.path()), {}) == 1);
  // analytic has no --heatmaps: it measures no tile.
  CHECK(run_wafersim({"analytic", kTinyDense, "--heatmaps", missing}).exit_code != 0);
}
