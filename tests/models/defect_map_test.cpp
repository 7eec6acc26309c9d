// Defect maps: seeded draws, map files (YAML and CSV) and their located errors.
#include "models/defect_map.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "models/config/error.h"

using namespace wafersim;

namespace {

std::string write_map(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("wafersim_defects_" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string map_error(const std::string& name, const std::string& text) {
  try {
    read_defect_map(write_map(name, text), 8, 6);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("drawn defects depend on the seed alone", "[defects]") {
  DefectParams params;
  params.tile_failure_rate = 0.02;
  params.link_failure_rate = 0.01;
  params.seed = 5;
  const DefectMap a = draw_defects(params, 64, 48), b = draw_defects(params, 64, 48);
  CHECK(a.retire == b.retire);
  CHECK(a.dead_tiles > 0);
  CHECK(a.dead_links > 0);
  params.seed = 6;
  CHECK(draw_defects(params, 64, 48).retire != a.retire);
}

TEST_CASE("a perfect wafer draws no defect", "[defects]") {
  const DefectMap map = draw_defects(DefectParams{}, 64, 48);
  CHECK(map.dead_tiles == 0);
  CHECK(map.dead_links == 0);
}

TEST_CASE("a cluster kills the tiles around each drawn defect", "[defects]") {
  DefectParams params;
  params.tile_failure_rate = 0.001;
  params.seed = 3;
  const DefectMap single = draw_defects(params, 200, 200);
  params.cluster_radius = 1;
  const DefectMap clustered = draw_defects(params, 200, 200);
  REQUIRE(single.dead_tiles > 0);
  CHECK(clustered.dead_tiles > 2 * single.dead_tiles);
  for (uint32_t y = 1; y + 1 < 200; ++y)
    for (uint32_t x = 1; x + 1 < 200; ++x)
      if (single.retired(x, y)) CHECK((clustered.retired(x - 1, y - 1) && clustered.retired(x + 1, y + 1)));
}

TEST_CASE("YAML and CSV maps name the same defects", "[defects]") {
  const DefectMap yaml = read_defect_map(
      write_map("same.yaml", "dead_tiles:\n  - [3, 4]\n  - [0, 0]\ndead_links:\n  - [5, 1, east]\n"), 8, 6);
  const DefectMap csv =
      read_defect_map(write_map("same.csv", "kind,x,y,dir\ntile,3,4\ntile, 0, 0\nlink,5,1,east\n"), 8, 6);
  CHECK(yaml.retire == csv.retire);
  CHECK(yaml.dead_tiles == 2);
  CHECK(yaml.dead_links == 1);
  CHECK(yaml.retired(3, 4));
  CHECK(yaml.retired(5, 1));  // a dead link retires its west end
  CHECK_FALSE(yaml.retired(6, 1));
}

TEST_CASE("a bad map entry is refused at its file and line", "[defects]") {
  CHECK_THAT(map_error("outside.yaml", "dead_tiles:\n  - [1, 1]\n  - [8, 2]\n"),
             Catch::Contains("outside.yaml:3") && Catch::Contains("hardware.defects.map") &&
                 Catch::Contains("x = 8 is outside the 8 x 6 physical grid"));
  CHECK_THAT(map_error("outside.csv", "tile,1,1\ntile,2,6\n"),
             Catch::Contains("outside.csv:2") && Catch::Contains("y = 6 is outside"));
  CHECK_THAT(map_error("word.csv", "tile,one,1\n"), Catch::Contains("word.csv:1") && Catch::Contains("whole number"));
  CHECK_THAT(map_error("kind.csv", "core,1,1\n"), Catch::Contains("starts with tile or link"));
  CHECK_THAT(map_error("short.yaml", "dead_tiles:\n  - [1]\n"),
             Catch::Contains("short.yaml:2") && Catch::Contains("a dead tile is [x, y]"));
  CHECK_THAT(map_error("edge.yaml", "dead_links:\n  - [7, 0, east]\n"), Catch::Contains("leaves the grid"));
  CHECK_THAT(map_error("dir.yaml", "dead_links:\n  - [1, 0, west]\n"), Catch::Contains("neither east nor south"));
  CHECK_THAT(map_error("key.yaml", "dead_cores:\n  - [1, 0]\n"),
             Catch::Contains("key.yaml:1") && Catch::Contains("unknown key 'dead_cores'"));
  CHECK_THAT(map_error("syntax.yaml", "dead_tiles: [[1, 2]\n"), Catch::Contains("syntax.yaml"));
}
