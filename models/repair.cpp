#include "models/repair.h"

#include <algorithm>

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

// Extra physical hops of the worst straight segment of each length along one
// axis. A segment's extra hops are those of the gaps (retired lines between
// logical neighbours) it spans, so the worst segment of a length starts at a
// gap: every run of consecutive gaps is tried once, O(gaps^2).
std::vector<uint32_t> worst_segments(const std::vector<uint32_t>& physical_of) {
  const size_t n = physical_of.size();
  std::vector<std::pair<size_t, uint32_t>> gaps;  // (logical line c, extra hops from c - 1 to c)
  for (size_t c = 1; c < n; ++c)
    if (physical_of[c] - physical_of[c - 1] > 1) gaps.push_back({c, physical_of[c] - physical_of[c - 1] - 1});
  std::vector<uint32_t> worst(n, 0);
  for (size_t first = 0; first < gaps.size(); ++first) {
    uint32_t extra = 0;
    for (size_t last = first; last < gaps.size(); ++last) {
      extra += gaps[last].second;
      uint32_t& at_length = worst[gaps[last].first - gaps[first].first + 1];
      at_length = std::max(at_length, extra);
    }
  }
  for (size_t length = 1; length < n; ++length) worst[length] = std::max(worst[length], worst[length - 1]);
  return worst;
}

// Extra physical hops of a straight segment of each length along one axis,
// the mean over every start rounded to whole hops (prefix sums of the lines'
// extra hops: O(lines)), and never less than a shorter segment's.
std::vector<uint32_t> mean_segments(const std::vector<uint32_t>& physical_of) {
  const size_t n = physical_of.size();
  std::vector<uint64_t> before(n + 1, 0);  // extra hops of the lines before c, summed: sum of physical_of[i] - i
  for (size_t c = 0; c < n; ++c) before[c + 1] = before[c] + (physical_of[c] - c);
  std::vector<uint32_t> mean(n, 0);
  for (size_t length = 1; length < n; ++length) {
    const size_t starts = n - length;
    const uint64_t total = (before[n] - before[length]) - before[starts];
    mean[length] = std::max(mean[length - 1], uint32_t((total + starts / 2) / starts));
  }
  return mean;
}

// Extra hops summed over the logical links of one axis (each link is repeated `lines` times).
uint64_t extra_over_links(const std::vector<uint32_t>& physical_of, uint64_t lines) {
  return physical_of.empty() ? 0
                             : (uint64_t(physical_of.back() - physical_of.front()) - (physical_of.size() - 1)) * lines;
}

}  // namespace

WaferRepair repair_wafer(DefectMap defects, uint32_t logical_width, uint32_t logical_height, DetourCharge charge) {
  WaferRepair repair{std::move(defects), {}, {}, {}, {}, 0, {}, 0};
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
  const auto segments = charge == DetourCharge::Worst ? worst_segments : mean_segments;
  const std::vector<uint32_t> x = segments(repair.column_of), y = segments(repair.row_of);
  std::vector<uint32_t>& extra = repair.detours.extra_hops;
  extra.assign(std::max(x.size(), y.size()), 0);
  for (size_t length = 0; length < extra.size(); ++length)
    extra[length] = std::max(length < x.size() ? x[length] : x.back(), length < y.size() ? y[length] : y.back());
  const uint64_t links = uint64_t(logical_width - 1) * logical_height + uint64_t(logical_height - 1) * logical_width;
  const uint64_t extra_hops =
      extra_over_links(repair.column_of, logical_height) + extra_over_links(repair.row_of, logical_width);
  repair.extra_hops_mean = links == 0 ? 0 : double(extra_hops) / double(links);
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
  std::vector<bool> row_logical(map.height, false), column_logical(map.width, false);
  for (uint32_t y : repair.retired_rows) row_retired[y] = true;
  for (uint32_t x : repair.retired_columns) column_retired[x] = true;
  for (uint32_t y : repair.row_of) row_logical[y] = true;
  for (uint32_t x : repair.column_of) column_logical[x] = true;
  std::vector<PhysicalTile> tiles(size_t(map.width) * map.height, PhysicalTile::UnusedSpare);
  for (uint32_t y = 0; y < map.height; ++y)
    for (uint32_t x = 0; x < map.width; ++x) {
      PhysicalTile& tile = tiles[size_t(y) * map.width + x];
      if (map.tile_dead(x, y))
        tile = PhysicalTile::DeadTile;
      else if (map.retired(x, y))
        tile = PhysicalTile::DeadLink;
      else if (row_retired[y] || column_retired[x])
        tile = PhysicalTile::Retired;
      else if (row_logical[y] && column_logical[x])
        tile = PhysicalTile::Logical;
    }
  return tiles;
}

std::string task_on_dead_tile(const ProgramSet& set, const WaferRepair& repair) {
  for (uint64_t tile = 0; tile < set.tile_program.size(); ++tile) {
    if (set.tile_program[tile] == ProgramSet::kIdle) continue;
    const uint32_t x = uint32_t(tile % set.grid_width);
    const uint32_t y = uint32_t(tile / set.grid_width % set.grid_height);
    const uint32_t physical_x = repair.column_of[x], physical_y = repair.row_of[y];
    if (repair.defects.retired(physical_x, physical_y))
      return "tile (" + std::to_string(x) + ", " + std::to_string(y) + ") of wafer " +
             std::to_string(tile / set.grid_width / set.grid_height) + " runs a program on dead physical tile (" +
             std::to_string(physical_x) + ", " + std::to_string(physical_y) + ")";
  }
  return "";
}

}  // namespace wafersim
