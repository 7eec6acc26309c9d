#include "models/repair_detours.h"

#include <algorithm>

namespace wafersim {

namespace {

// The extra physical hops of each logical step along one axis, shared by
// `lines` lines of the logical grid: steps[c] for the step from logical c - 1
// to c (steps[0] is 0).
struct StepPattern {
  std::vector<uint32_t> steps;
  uint64_t lines = 0;
};
using Axis = std::vector<StepPattern>;

// The steps between consecutive physical lines: those a retired line lies between take one more hop each.
std::vector<uint32_t> steps_between(const std::vector<uint32_t>& physical_of) {
  std::vector<uint32_t> steps(physical_of.size(), 0);
  for (size_t c = 1; c < physical_of.size(); ++c) steps[c] = physical_of[c] - physical_of[c - 1] - 1;
  return steps;
}

// Adds one line's steps to `axis`, lines without extra hops all to one pattern.
void add_line(Axis& axis, std::vector<uint32_t> steps) {
  if (std::all_of(steps.begin(), steps.end(), [](uint32_t s) { return s == 0; }))
    for (StepPattern& pattern : axis)
      if (pattern.steps == steps) {
        ++pattern.lines;
        return;
      }
  axis.push_back({std::move(steps), 1});
}

// Extra physical hops of the worst straight segment of each length along one
// line. A segment's extra hops are those of the steps it spans, so the worst
// segment of a length starts at a step with extra hops: every run of
// consecutive such steps is tried once, O(gaps^2).
std::vector<uint32_t> worst_segments(const std::vector<uint32_t>& steps) {
  const size_t n = steps.size();
  std::vector<std::pair<size_t, uint32_t>> gaps;  // (logical line c, extra hops from c - 1 to c)
  for (size_t c = 1; c < n; ++c)
    if (steps[c] > 0) gaps.push_back({c, steps[c]});
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

// Segment statistics of one axis (WaferRepair::Segments): the worst over
// every line, and for the mean each length's extra hops summed over every
// start of every line (prefix sums of the steps' extra hops: O(lines)).
WaferRepair::Segments segments(const Axis& axis) {
  const size_t n = axis.front().steps.size();
  WaferRepair::Segments out;
  out.worst.assign(n, 0);
  std::vector<uint64_t> total(n, 0);  // [c]: the step to c's extra hops, summed over the lines
  uint64_t lines = 0;
  for (const StepPattern& pattern : axis) {
    const std::vector<uint32_t> line = worst_segments(pattern.steps);
    for (size_t length = 0; length < n; ++length) out.worst[length] = std::max(out.worst[length], line[length]);
    for (size_t c = 0; c < n; ++c) total[c] += pattern.lines * pattern.steps[c];
    lines += pattern.lines;
  }
  std::vector<uint64_t> before(n + 1, 0);  // [c + 1]: the extra hops up to each line before c + 1, summed
  uint64_t up_to = 0;
  for (size_t c = 0; c < n; ++c) {
    up_to += total[c];
    before[c + 1] = before[c] + up_to;
  }
  out.extra.assign(n, 0);
  out.starts.assign(n, 0);
  for (size_t length = 1; length < n; ++length) {
    out.starts[length] = (n - length) * lines;
    out.extra[length] = (before[n] - before[length]) - before[n - length];
  }
  for (uint64_t extra : total) out.link_extra_hops += extra;
  return out;
}

// One axis's charge by segment length over `wafers`: the worst, or the mean
// over every start of every line of every wafer rounded to whole hops; either
// never less than a shorter segment's.
std::vector<uint32_t> axis_charge(const std::vector<const WaferRepair::Segments*>& wafers, DetourCharge charge) {
  const size_t n = wafers.front()->worst.size();
  std::vector<uint32_t> charged(n, 0);
  for (size_t length = 1; length < n; ++length) {
    if (charge == DetourCharge::Worst) {
      for (const WaferRepair::Segments* axis : wafers) charged[length] = std::max(charged[length], axis->worst[length]);
    } else {
      uint64_t extra = 0, starts = 0;
      for (const WaferRepair::Segments* axis : wafers) extra += axis->extra[length], starts += axis->starts[length];
      charged[length] = uint32_t((extra + starts / 2) / starts);
    }
    charged[length] = std::max(charged[length], charged[length - 1]);
  }
  return charged;
}

// The physical column of every logical tile of row y.
std::vector<uint32_t> row_columns(const WaferRepair& repair, uint32_t y) {
  std::vector<uint32_t> columns(repair.logical_width());
  for (uint32_t x = 0; x < columns.size(); ++x) columns[x] = repair.physical_column(x, y);
  return columns;
}

// The extra hops of each step along a logical row or down a logical column.
// Along a row, a step past skipped tiles takes the path around them, one more
// hop for each (under the shift scheme over the diagonal links above or below
// them). Down a column, a step crosses the retired rows between its tiles;
// under the shift scheme its tiles may also sit a few columns apart, which a
// diagonal link covers one column per row.
class LineSteps {
 public:
  explicit LineSteps(const WaferRepair& repair) : repair_(repair), shifted_(repair.logical_height()) {
    for (uint32_t y = 0; y < repair.row_skips.size(); ++y)
      if (!repair.row_skips[y].empty()) shifted_[y] = row_columns(repair, y);
  }

  std::vector<uint32_t> row(uint32_t y) const {
    return steps_between(shifted_[y].empty() ? repair_.column_of : shifted_[y]);
  }
  std::vector<uint32_t> column(uint32_t x) const {
    std::vector<uint32_t> steps(repair_.logical_height(), 0);
    for (uint32_t y = 1; y < steps.size(); ++y) {
      const uint32_t a = column_at(x, y - 1), b = column_at(x, y);
      const uint32_t across = a > b ? a - b : b - a, down = repair_.row_of[y] - repair_.row_of[y - 1];
      steps[y] = std::max(across, down) - 1;
    }
    return steps;
  }

 private:
  uint32_t column_at(uint32_t x, uint32_t y) const {
    return shifted_[y].empty() ? repair_.column_of[x] : shifted_[y][x];
  }

  const WaferRepair& repair_;
  std::vector<std::vector<uint32_t>> shifted_;  // [logical row]: its tiles' columns, for rows that skip a tile
};

std::pair<Axis, Axis> axes(const WaferRepair& repair) {
  const uint32_t width = repair.logical_width(), height = repair.logical_height();
  Axis x, y;
  if (repair.scheme == RepairScheme::Lines) {  // every row alike, every column alike
    x.push_back({steps_between(repair.column_of), height});
    y.push_back({steps_between(repair.row_of), width});
    return {x, y};
  }
  const LineSteps steps(repair);
  for (uint32_t row = 0; row < height; ++row) add_line(x, steps.row(row));
  for (uint32_t column = 0; column < width; ++column) add_line(y, steps.column(column));
  return {x, y};
}

}  // namespace

std::pair<WaferRepair::Segments, WaferRepair::Segments> repair_segments(const WaferRepair& repair) {
  const auto [x_axis, y_axis] = axes(repair);
  return {segments(x_axis), segments(y_axis)};
}

DetourTable detour_table(const std::vector<const WaferRepair*>& wafers, DetourCharge charge) {
  std::vector<const WaferRepair::Segments*> along_x, along_y;
  for (const WaferRepair* wafer : wafers) along_x.push_back(&wafer->along_x), along_y.push_back(&wafer->along_y);
  const std::vector<uint32_t> x = axis_charge(along_x, charge), y = axis_charge(along_y, charge);
  DetourTable table;
  table.extra_hops.assign(std::max(x.size(), y.size()), 0);
  for (size_t length = 0; length < table.extra_hops.size(); ++length)
    table.extra_hops[length] =
        std::max(length < x.size() ? x[length] : x.back(), length < y.size() ? y[length] : y.back());
  return table;
}

double extra_hops_mean(const std::vector<const WaferRepair*>& wafers) {
  uint64_t extra = 0, links = 0;
  for (const WaferRepair* wafer : wafers)
    extra += wafer->along_x.link_extra_hops + wafer->along_y.link_extra_hops, links += wafer->links;
  return links == 0 ? 0 : double(extra) / double(links);
}

RouteDetours::RouteDetours(const WaferRepair& repair)
    : width_(repair.logical_width()), height_(repair.logical_height()) {
  const LineSteps steps(repair);
  row_prefix_.resize(size_t(width_) * height_);
  column_prefix_.resize(size_t(width_) * height_);
  for (uint32_t y = 0; y < height_; ++y) {
    const std::vector<uint32_t> row = steps.row(y);
    for (uint32_t x = 0, sum = 0; x < width_; ++x) row_prefix_[size_t(y) * width_ + x] = sum += row[x];
  }
  for (uint32_t x = 0; x < width_; ++x) {
    const std::vector<uint32_t> column = steps.column(x);
    for (uint32_t y = 0, sum = 0; y < height_; ++y) column_prefix_[size_t(x) * height_ + y] = sum += column[y];
  }
}

uint32_t RouteDetours::along_row(uint32_t y, uint32_t x0, uint32_t x1) const {
  const uint32_t a = row_prefix_[size_t(y) * width_ + x0], b = row_prefix_[size_t(y) * width_ + x1];
  return a > b ? a - b : b - a;
}

uint32_t RouteDetours::down_column(uint32_t x, uint32_t y0, uint32_t y1) const {
  const uint32_t a = column_prefix_[size_t(x) * height_ + y0], b = column_prefix_[size_t(x) * height_ + y1];
  return a > b ? a - b : b - a;
}

uint32_t RouteDetours::route(uint32_t x, uint32_t y, int32_t dx, int32_t dy, bool y_first) const {
  return route(x, y, send_route(dx, dy, y_first, 0));
}

uint32_t RouteDetours::route(uint32_t x, uint32_t y, const SendRoute& path) const {
  uint32_t extra = 0;
  for (const RouteLeg& leg : path.legs) {
    if (leg.along_x) {
      const uint32_t to_x = uint32_t(int64_t(x) + leg.length);
      extra += along_row(y, x, to_x);
      x = to_x;
    } else {
      const uint32_t to_y = uint32_t(int64_t(y) + leg.length);
      extra += down_column(x, y, to_y);
      y = to_y;
    }
  }
  return extra;
}

}  // namespace wafersim
