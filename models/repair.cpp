#include "models/repair.h"

#include <algorithm>
#include <tuple>

#include "models/repair_detours.h"

namespace wafersim {

namespace {

// The dead tiles no retired line covers yet, counted per row and per column.
class Cover {
 public:
  explicit Cover(const DefectMap& map)
      : map_(map),
        row_dead_(map.height, 0),
        column_dead_(map.width, 0),
        row_retired_(map.height, false),
        column_retired_(map.width, false) {
    for (uint32_t y = 0; y < map.height; ++y)
      for (uint32_t x = 0; x < map.width; ++x)
        if (map.retired(x, y)) ++row_dead_[y], ++column_dead_[x], ++left_;
  }

  uint64_t left() const { return left_; }
  const std::vector<uint32_t>& row_dead() const { return row_dead_; }
  const std::vector<uint32_t>& column_dead() const { return column_dead_; }
  const std::vector<bool>& rows_retired() const { return row_retired_; }
  const std::vector<bool>& columns_retired() const { return column_retired_; }

  void retire_row(uint32_t y) {
    row_retired_[y] = true;
    for (uint32_t x = 0; x < map_.width; ++x)
      if (map_.retired(x, y) && !column_retired_[x]) --column_dead_[x], --left_;
    row_dead_[y] = 0;
  }
  void retire_column(uint32_t x) {
    column_retired_[x] = true;
    for (uint32_t y = 0; y < map_.height; ++y)
      if (map_.retired(x, y) && !row_retired_[y]) --row_dead_[y], --left_;
    column_dead_[x] = 0;
  }

 private:
  const DefectMap& map_;
  std::vector<uint32_t> row_dead_, column_dead_;
  std::vector<bool> row_retired_, column_retired_;
  uint64_t left_ = 0;
};

// The line with the most dead tiles (the first on a tie); `dead` is 0 when none has any.
std::pair<uint32_t, uint32_t> busiest(const std::vector<uint32_t>& dead) {
  const auto at = std::max_element(dead.begin(), dead.end());
  return {uint32_t(at - dead.begin()), *at};
}

// The first `count` lines not retired, in order: where the logical lines sit.
std::vector<uint32_t> kept_lines(const std::vector<bool>& retired, uint32_t count) {
  std::vector<uint32_t> lines;
  for (uint32_t i = 0; i < retired.size() && lines.size() < count; ++i)
    if (!retired[i]) lines.push_back(i);
  return lines;
}

// The lines scheme's repair: retired rows and columns (Cover).
void retire_lines(WaferRepair& repair, uint32_t logical_width, uint32_t logical_height) {
  const DefectMap& map = repair.defects;
  uint32_t rows_left = map.height - logical_height, columns_left = map.width - logical_width;
  Cover cover(map);
  while (cover.left() > 0) {
    const auto [row, row_dead] = busiest(cover.row_dead());
    const auto [column, column_dead] = busiest(cover.column_dead());
    // A line with more dead tiles than spares across it can only be covered by retiring it.
    const bool row_forced = row_dead > columns_left && rows_left > 0;
    const bool column_forced = column_dead > rows_left && columns_left > 0;
    const bool take_row = row_forced || (!column_forced && rows_left > 0 && (row_dead >= column_dead || !columns_left));
    if (take_row) {
      cover.retire_row(row), --rows_left, repair.retired_rows.push_back(row);
    } else if (columns_left > 0) {
      cover.retire_column(column), --columns_left, repair.retired_columns.push_back(column);
    } else {
      repair.missing_tiles = cover.left();  // the logical grid keeps them: the compiler refuses it
      break;
    }
  }
  std::sort(repair.retired_rows.begin(), repair.retired_rows.end());
  std::sort(repair.retired_columns.begin(), repair.retired_columns.end());
  repair.column_of = kept_lines(cover.columns_retired(), logical_width);
  repair.row_of = kept_lines(cover.rows_retired(), logical_height);
}

// The shift scheme's repair: the logical rows are the first physical rows
// whose dead tiles the spare columns can take, each skipping its own dead
// tiles. Short of such rows, the logical grid also takes those with the fewest
// dead tiles beyond the spare columns, which stay in it as missing tiles.
void shift_rows(WaferRepair& repair, uint32_t logical_width, uint32_t logical_height) {
  const DefectMap& map = repair.defects;
  const uint32_t spare_columns = map.width - logical_width;
  std::vector<std::vector<uint32_t>> dead(map.height);  // [physical row]: its dead columns, ascending
  for (uint32_t y = 0; y < map.height; ++y)
    for (uint32_t x = 0; x < map.width; ++x)
      if (map.retired(x, y)) dead[y].push_back(x);
  std::vector<bool> taken(map.height, false);
  std::vector<uint32_t> overfull;  // rows with more dead tiles than spare columns
  uint32_t rows = 0;
  for (uint32_t y = 0; y < map.height && rows < logical_height; ++y)
    if (dead[y].size() <= spare_columns)
      taken[y] = true, ++rows;
    else
      overfull.push_back(y);
  std::stable_sort(overfull.begin(), overfull.end(),
                   [&](uint32_t a, uint32_t b) { return dead[a].size() < dead[b].size(); });
  for (size_t k = 0; rows < logical_height && k < overfull.size(); ++k, ++rows) {
    taken[overfull[k]] = true;
    repair.missing_tiles += dead[overfull[k]].size() - spare_columns;
  }
  for (uint32_t y = 0; y < map.height; ++y) {
    if (taken[y]) {
      repair.row_of.push_back(y);
      dead[y].resize(std::min<size_t>(dead[y].size(), spare_columns));
      repair.row_skips.push_back(std::move(dead[y]));
    }
  }
  for (uint32_t y = 0; y < repair.row_of.back(); ++y)
    if (!taken[y]) repair.retired_rows.push_back(y);
  repair.column_of.resize(logical_width);
  for (uint32_t x = 0; x < logical_width; ++x) repair.column_of[x] = x;
}

}  // namespace

uint32_t WaferRepair::spare_columns_used() const {
  if (scheme == RepairScheme::Lines) return uint32_t(retired_columns.size());
  size_t most = 0;
  for (const std::vector<uint32_t>& skips : row_skips) most = std::max(most, skips.size());
  return uint32_t(most);
}

uint32_t WaferRepair::physical_column(uint32_t x, uint32_t y) const {
  if (row_skips.empty()) return column_of[x];
  uint32_t column = x;
  for (uint32_t skipped : row_skips[y]) {
    if (skipped > column) break;
    ++column;
  }
  return column;
}

uint32_t WaferRepair::shifted_rows() const {
  return uint32_t(std::count_if(row_skips.begin(), row_skips.end(), [](const auto& skips) { return !skips.empty(); }));
}

WaferRepair repair_wafer(DefectMap defects, uint32_t logical_width, uint32_t logical_height, DetourCharge charge,
                         RepairScheme scheme) {
  WaferRepair repair{std::move(defects), scheme, {}, {}, {}, {}, {}, 0, {}, 0, {}, {}, 0};
  if (scheme == RepairScheme::Lines)
    retire_lines(repair, logical_width, logical_height);
  else
    shift_rows(repair, logical_width, logical_height);
  std::tie(repair.along_x, repair.along_y) = repair_segments(repair);
  repair.links = uint64_t(logical_width - 1) * logical_height + uint64_t(logical_height - 1) * logical_width;
  repair.detours = detour_table({&repair}, charge);
  repair.extra_hops_mean = extra_hops_mean({&repair});
  return repair;
}

std::string repair_shortfall(const WaferRepair& repair) {
  const DefectMap& map = repair.defects;
  const uint32_t width = repair.logical_width(), height = repair.logical_height();
  return std::to_string(repair.missing_tiles) + " dead tiles are left after every spare is used (" +
         std::to_string(map.dead_tiles) + " dead tiles, " + std::to_string(map.dead_links) + " dead links; " +
         std::to_string(map.height - height) + " spare rows, " + std::to_string(map.width - width) +
         " spare columns): the " + std::to_string(width) + " x " + std::to_string(height) + " logical grid misses " +
         std::to_string(repair.missing_tiles) + (repair.missing_tiles == 1 ? " tile" : " tiles") + " (hardware.spares)";
}

std::vector<PhysicalTile> physical_tiles(const WaferRepair& repair) {
  const DefectMap& map = repair.defects;
  std::vector<bool> row_retired(map.height, false), column_retired(map.width, false);
  for (uint32_t y : repair.retired_rows) row_retired[y] = true;
  for (uint32_t x : repair.retired_columns) column_retired[x] = true;
  std::vector<PhysicalTile> tiles(size_t(map.width) * map.height, PhysicalTile::UnusedSpare);
  for (uint32_t y = 0; y < map.height; ++y)
    for (uint32_t x = 0; x < map.width; ++x)
      if (row_retired[y] || column_retired[x]) tiles[size_t(y) * map.width + x] = PhysicalTile::Retired;
  for (uint32_t y = 0; y < repair.logical_height(); ++y)
    for (uint32_t x = 0; x < repair.logical_width(); ++x)
      tiles[size_t(repair.row_of[y]) * map.width + repair.physical_column(x, y)] = PhysicalTile::Logical;
  for (uint32_t y = 0; y < map.height; ++y)
    for (uint32_t x = 0; x < map.width; ++x)
      if (map.retired(x, y))
        tiles[size_t(y) * map.width + x] = map.tile_dead(x, y) ? PhysicalTile::DeadTile : PhysicalTile::DeadLink;
  return tiles;
}

std::string task_on_dead_tile(const ProgramSet& set, uint32_t wafer, const WaferRepair& repair) {
  const uint64_t first = uint64_t(wafer) * set.grid_width * set.grid_height;
  for (uint64_t tile = first; tile < first + uint64_t(set.grid_width) * set.grid_height; ++tile) {
    if (set.tile_program[tile] == ProgramSet::kIdle) continue;
    const uint32_t x = uint32_t(tile % set.grid_width);
    const uint32_t y = uint32_t(tile / set.grid_width % set.grid_height);
    const uint32_t physical_x = repair.physical_column(x, y), physical_y = repair.row_of[y];
    if (repair.defects.retired(physical_x, physical_y))
      return "tile (" + std::to_string(x) + ", " + std::to_string(y) + ") of wafer " + std::to_string(wafer) +
             " runs a program on dead physical tile (" + std::to_string(physical_x) + ", " +
             std::to_string(physical_y) + ")";
  }
  return "";
}

}  // namespace wafersim
