#pragma once
// The dead tiles and links of a wafer's physical grid (the logical grid plus
// its spare rows and columns), drawn from seeded failure rates or read from a
// map file (docs/DEFECTS.md); models/wafer_repairs.h gives each wafer its own.
#include <cstdint>
#include <string>
#include <vector>

#include "models/detours.h"

namespace wafersim {

struct DefectParams {
  double tile_failure_rate = 0;  // probability that a tile is dead
  double link_failure_rate = 0;  // probability that a link (to the east or south neighbour) is dead
  uint32_t cluster_radius = 0;   // a drawn dead tile also kills the tiles this close (Chebyshev distance)
  uint64_t seed = 1;
  std::string map_file;  // a YAML or CSV list of dead tiles and links; "" = draw from the rates
  DetourCharge detour_charge = DetourCharge::Worst;

  bool any() const { return tile_failure_rate > 0 || link_failure_rate > 0 || !map_file.empty(); }
};

// How the repair uses the spares (docs/DEFECTS.md). Lines: a row or column
// holding a dead tile is skipped whole. Shift: the tiles of a row shift by one
// position past each of its dead tiles into the spare columns, with diagonal
// links to the rows above and below; a row with more dead tiles than spare
// columns is skipped whole, into the spare rows.
enum class RepairScheme : uint8_t { Lines, Shift };

struct SpareParams {
  uint32_t rows = 0;     // per wafer, beyond hardware.grid_height
  uint32_t columns = 0;  // per wafer, beyond hardware.grid_width
  RepairScheme scheme = RepairScheme::Lines;
};

enum class LinkDir : uint8_t { East, South };

struct DefectMap {
  uint32_t width = 0, height = 0;  // the physical grid
  // Per tile, row-major: the tile is dead or its router lost the link to its
  // east or south neighbour. Either way repair retires it: a dead link is
  // repaired as a dead tile at its west or north end.
  std::vector<uint8_t> retire;
  uint64_t dead_tiles = 0, dead_links = 0;

  DefectMap(uint32_t physical_width, uint32_t physical_height)
      : width(physical_width), height(physical_height), retire(size_t(physical_width) * physical_height, 0) {}
  bool retired(uint32_t x, uint32_t y) const { return retire[size_t(y) * width + x] != 0; }
  // The tile itself is dead (retired() also holds for a live tile whose router lost a link).
  bool tile_dead(uint32_t x, uint32_t y) const;
  void kill_tile(uint32_t x, uint32_t y);
  void kill_link(uint32_t x, uint32_t y, LinkDir dir);
};

// Draws every tile and link of a width x height grid once, in a fixed order,
// from a generator seeded with params.seed: the same seed gives the same map.
DefectMap draw_defects(const DefectParams& params, uint32_t width, uint32_t height);

// Reads a map file: YAML (`dead_tiles: [[x, y], ...]`, `dead_links: [[x, y,
// east|south], ...]`) or, for a name ending in .csv, lines `tile,x,y` and
// `link,x,y,east|south` (a first line `kind,x,y,dir` is a header). An entry
// outside the grid or malformed throws config::ConfigError at its file and
// line, naming hardware.defects.map.
DefectMap read_defect_map(const std::string& path, uint32_t width, uint32_t height);

}  // namespace wafersim
