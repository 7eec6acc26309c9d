#pragma once
// Repair of a defective wafer, as a row-and-column redundancy scheme does it:
// rows and columns that hold a dead tile are retired and the logical grid
// shifts into the spares beyond them, so programs see a perfect logical grid
// of the preset's size (docs/DEFECTS.md). A logical hop across a retired row
// or column takes one more physical hop for each.
#include <cstdint>
#include <string>
#include <vector>

#include "models/defect_map.h"
#include "models/detours.h"
#include "models/tile_program.h"

namespace wafersim {

struct WaferRepair {
  DefectMap defects;
  std::vector<uint32_t> column_of;                      // logical column -> physical column
  std::vector<uint32_t> row_of;                         // logical row -> physical row
  std::vector<uint32_t> retired_rows, retired_columns;  // physical, ascending: each took one spare
  // Dead tiles left in the logical grid when the spares ran out: no plan fits it (exit 3).
  uint64_t missing_tiles = 0;
  DetourTable detours;
  // Extra physical hops per logical link, averaged over every link of the logical grid.
  double extra_hops_mean = 0;

  uint32_t spare_rows_used() const { return uint32_t(retired_rows.size()); }
  uint32_t spare_columns_used() const { return uint32_t(retired_columns.size()); }
  uint32_t logical_width() const { return uint32_t(column_of.size()); }
  uint32_t logical_height() const { return uint32_t(row_of.size()); }
};

// Retires rows and columns until every dead tile is covered: first any line
// whose dead tiles outnumber the spares of the other direction (only retiring
// it can cover them), then the line with the most dead tiles left (rows first
// on a tie). Deterministic. When the spares run out first, the dead tiles left
// are counted in missing_tiles. `charge` says how the detour table is made.
WaferRepair repair_wafer(DefectMap defects, uint32_t logical_width, uint32_t logical_height,
                         DetourCharge charge = DetourCharge::Worst);

// What a tile of the physical grid became in the repair (the heatmaps draw
// it, docs/OBSERVABILITY.md); the values are the categories' numbers there.
enum class PhysicalTile : int32_t {
  Logical = 0,      // works and holds a tile of the logical grid
  DeadTile = 1,     // dead
  DeadLink = 2,     // works, but its router lost its east or south link: retired as a dead tile
  Retired = 3,      // works, skipped with its row or column
  UnusedSpare = 4,  // works, in a spare row or column the logical grid did not need
};
inline const char* const kPhysicalTileNames[] = {"logical tile", "dead tile", "dead link", "retired", "unused spare"};

// Every tile of the physical grid, row-major (width x height of repair.defects).
std::vector<PhysicalTile> physical_tiles(const WaferRepair& repair);

// What the compiler says of a wafer with missing tiles: how many, of which grid, with which spares.
std::string repair_shortfall(const WaferRepair& repair);

// The first tile of `set` that runs a program on a physical tile the repair
// left dead, as "tile (x, y) of wafer w runs a program on dead physical tile
// (px, py)"; "" when none does.
std::string task_on_dead_tile(const ProgramSet& set, const WaferRepair& repair);

}  // namespace wafersim
