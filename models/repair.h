#pragma once
// Repair of a defective wafer, so that programs see a perfect logical grid of
// the preset's size (docs/DEFECTS.md), in one of two schemes (RepairScheme):
// rows and columns that hold a dead tile are retired whole and the logical grid
// shifts into the spares beyond them, or each row shifts by one position past
// its own dead tiles into the spare columns. A logical hop takes the extra
// physical hops of the path around what the repair skipped.
#include <cstdint>
#include <string>
#include <vector>

#include "models/defect_map.h"
#include "models/detours.h"
#include "models/tile_program.h"

namespace wafersim {

struct WaferRepair {
  DefectMap defects;
  RepairScheme scheme = RepairScheme::Lines;
  std::vector<uint32_t> column_of;                      // logical column -> physical column (shift: before skips)
  std::vector<uint32_t> row_of;                         // logical row -> physical row
  std::vector<uint32_t> retired_rows, retired_columns;  // physical, ascending: each took one spare
  // Shift: per logical row, the physical columns of its physical row it skips
  // (ascending); logical column x is the row's x-th column not skipped. Empty
  // under the lines scheme.
  std::vector<std::vector<uint32_t>> row_skips;
  // Dead tiles left in the logical grid when the spares ran out: no plan fits it (exit 3).
  uint64_t missing_tiles = 0;
  DetourTable detours;
  // Extra physical hops per logical link, averaged over every link of the logical grid.
  double extra_hops_mean = 0;
  // What detour tables are made of, per axis by straight segment length: the
  // most extra hops any segment meets, and for the mean the extra hops summed
  // over every start of every line, with how many starts; and the extra hops
  // of every logical link, with how many links there are.
  struct Segments {
    std::vector<uint32_t> worst;
    std::vector<uint64_t> extra, starts;
    uint64_t link_extra_hops = 0;
  };
  Segments along_x, along_y;
  uint64_t links = 0;

  uint32_t spare_rows_used() const { return uint32_t(retired_rows.size()); }
  // Shift: the spare columns the most shifted row reaches into.
  uint32_t spare_columns_used() const;
  // The physical column of logical tile (x, y).
  uint32_t physical_column(uint32_t x, uint32_t y) const;
  // Logical rows that skip at least one column (shift).
  uint32_t shifted_rows() const;
  uint32_t logical_width() const { return uint32_t(column_of.size()); }
  uint32_t logical_height() const { return uint32_t(row_of.size()); }
};

// Lines: retires rows and columns until every dead tile is covered: first any
// line whose dead tiles outnumber the spares of the other direction (only
// retiring it can cover them), then the line with the most dead tiles left
// (rows first on a tie). Shift: the logical rows are the first physical rows
// with no more dead tiles than spare columns, each skipping its dead tiles.
// Deterministic either way. When the spares run out first, the dead tiles left
// are counted in missing_tiles. `charge` says how the detour table is made.
WaferRepair repair_wafer(DefectMap defects, uint32_t logical_width, uint32_t logical_height,
                         DetourCharge charge = DetourCharge::Worst, RepairScheme scheme = RepairScheme::Lines);

// What a tile of the physical grid became in the repair (the heatmaps draw
// it, docs/OBSERVABILITY.md); the values are the categories' numbers there.
enum class PhysicalTile : int32_t {
  Logical = 0,      // works and holds a tile of the logical grid
  DeadTile = 1,     // dead
  DeadLink = 2,     // works, but its router lost its east or south link: retired as a dead tile
  Retired = 3,      // works, skipped with its row or column (shift: with its row)
  UnusedSpare = 4,  // works, in a spare row or column the logical grid did not need (shift: past a row's last tile)
};
inline const char* const kPhysicalTileNames[] = {"logical tile", "dead tile", "dead link", "retired", "unused spare"};

// Every tile of the physical grid, row-major (width x height of repair.defects).
std::vector<PhysicalTile> physical_tiles(const WaferRepair& repair);

// What the compiler says of a wafer with missing tiles: how many, of which grid, with which spares.
std::string repair_shortfall(const WaferRepair& repair);

// The first tile of wafer `wafer` of `set` that runs a program on a physical
// tile its repair left dead, as "tile (x, y) of wafer w runs a program on dead
// physical tile (px, py)"; "" when none does.
std::string task_on_dead_tile(const ProgramSet& set, uint32_t wafer, const WaferRepair& repair);

}  // namespace wafersim
