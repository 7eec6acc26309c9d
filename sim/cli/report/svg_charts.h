#pragma once
// Charts of the report page as inline SVG, drawn here without any script or
// library. Every value axis starts at zero, so bar lengths compare as the
// values do; each bar carries its exact value as a tooltip (<title>).
#include <string>
#include <vector>

#include "sim/cli/report/npy_read.h"

namespace wafersim::cli {

struct Bar {
  std::string label;
  double value = 0;
};

// One horizontal bar per entry, its value printed at its end: a few tens of
// labelled entries (a layer's steps, percentiles).
std::string svg_hbars(const std::vector<Bar>& bars, const std::string& unit, int decimals);

// Vertical columns over a value axis of round ticks: long series (per layer);
// only every so many labels are printed when they would overlap.
std::string svg_columns(const std::vector<Bar>& bars, const std::string& unit, int decimals);

// Bars of 100 %, one per row, each part in its colour (the same part keeps its
// colour on every row), the share printed where it fits, a legend below.
struct Share {
  std::string part;
  double fraction = 0;
};
struct StackedRow {
  std::string label;
  std::vector<Share> shares;
};
std::string svg_stacked(const std::vector<StackedRow>& rows);

// Points of two figures over axes from zero; the highlighted ones (a Pareto
// front) are drawn in colour and joined in order of x.
struct ScatterPoint {
  double x = 0;
  double y = 0;
  std::string label;
  bool highlighted = false;
};
std::string svg_scatter(const std::vector<ScatterPoint>& points, const std::string& x_label,
                        const std::string& y_label);

// A grid of tiles, one cell per block of tiles showing the block's largest
// value, on a colour scale from zero to the grid's largest value (zero in grey).
std::string svg_heatmap(const NpyGrid& grid, const std::string& unit);

// A grid of categories (the value is an index into `names`), each in its own
// colour with a legend naming it and counting its tiles; a cell of a block of
// tiles shows the category of the block that is rarest on the whole grid.
std::string svg_categories(const NpyGrid& grid, const std::vector<std::string>& names);

}  // namespace wafersim::cli
