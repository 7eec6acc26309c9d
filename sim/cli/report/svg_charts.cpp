#include "sim/cli/report/svg_charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/cli/report/html_page.h"

namespace wafersim::cli {

namespace {

// Categorical colours (Tableau 10): distinct in print and for most colour-blind readers.
const std::vector<std::string> kPartColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
// A sequential scale (viridis, 9 steps) for heatmaps; zero has its own grey.
const std::vector<std::string> kScale = {"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c",
                                         "#28ae80", "#5ec962", "#addc30", "#fde725"};
const char* const kZeroColour = "#e8e8e8";
const char* const kBarColour = "#4e79a7";

std::string number(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

// Round tick labels: 2.5M rather than 2500000.
std::string tick_label(double value) {
  const double size = std::fabs(value);
  if (size >= 1e9) return fmt::format("{:g}G", value / 1e9);
  if (size >= 1e6) return fmt::format("{:g}M", value / 1e6);
  if (size >= 1e4) return fmt::format("{:g}k", value / 1e3);
  return fmt::format("{:g}", value);
}

// About five round steps (1, 2 or 5 times a power of ten) from zero past `largest`.
struct Axis {
  double step = 1;
  double end = 1;
  double at(double value, double length) const { return value / end * length; }
};
Axis value_axis(double largest) {
  if (!(largest > 0)) largest = 1;
  const double raw = largest / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalised = raw / magnitude;
  const double step = (normalised <= 1 ? 1 : normalised <= 2 ? 2 : normalised <= 5 ? 5 : 10) * magnitude;
  return {step, std::ceil(largest / step - 1e-9) * step};
}

double largest_value(const std::vector<Bar>& bars) {
  double largest = 0;
  for (const Bar& bar : bars) largest = std::max(largest, bar.value);
  return largest;
}

std::string svg_open(double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\">\n",
      width, height, width, height);
}

std::string text(double x, double y, const std::string& anchor, const std::string& content,
                 const std::string& extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, anchor, extra,
                     escape_html(content));
}

std::string line(double x1, double y1, double x2, double y2, const char* css_class) {
  return fmt::format("<line class=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", css_class, x1,
                     y1, x2, y2);
}

std::string rect(double x, double y, double width, double height, const std::string& fill, const std::string& tooltip) {
  return fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>\n", x, y,
      width, height, fill, escape_html(tooltip));
}

std::string with_unit(double value, int decimals, const std::string& unit) {
  return number(value, decimals) + (unit.empty() ? "" : " " + unit);
}

}  // namespace

std::string svg_hbars(const std::vector<Bar>& bars, const std::string& unit, int decimals) {
  const double label_width = 240, bar_length = 520, row = 16, top = 4;
  const double plot_bottom = top + row * double(bars.size());
  const Axis axis = value_axis(largest_value(bars));
  std::string out = svg_open(label_width + bar_length + 110, plot_bottom + 30);
  for (double tick = 0; tick <= axis.end + axis.step / 2; tick += axis.step) {
    const double x = label_width + axis.at(tick, bar_length);
    out += line(x, top, x, plot_bottom, "grid");
    out += text(x, plot_bottom + 13, "middle", tick_label(tick));
  }
  out += text(label_width + bar_length / 2, plot_bottom + 27, "middle", unit);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row * double(i);
    const double length = axis.at(std::max(0.0, bars[i].value), bar_length);
    out += text(label_width - 6, y + row - 4, "end", bars[i].label);
    out += rect(label_width, y + 2, length, row - 4, kBarColour,
                bars[i].label + ": " + with_unit(bars[i].value, decimals, unit));
    out += text(label_width + length + 4, y + row - 4, "start", number(bars[i].value, decimals));
  }
  out += line(label_width, top, label_width, plot_bottom, "axis");
  return out + "</svg>\n";
}

std::string svg_columns(const std::vector<Bar>& bars, const std::string& unit, int decimals) {
  const double left = 70, plot_width = 920, top = 8, plot_height = 220, label_room = 90;
  const double bottom = top + plot_height;
  const Axis axis = value_axis(largest_value(bars));
  std::string out = svg_open(left + plot_width + 10, bottom + label_room);
  for (double tick = 0; tick <= axis.end + axis.step / 2; tick += axis.step) {
    const double y = bottom - axis.at(tick, plot_height);
    out += line(left, y, left + plot_width, y, "grid");
    out += text(left - 5, y + 4, "end", tick_label(tick));
  }
  out += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     top + plot_height / 2, escape_html(unit));
  const double slot = plot_width / double(std::max<size_t>(bars.size(), 1));
  const size_t label_every = std::max<size_t>(1, size_t(std::ceil(12.0 / slot)));  // labels 12 px apart at least
  for (size_t i = 0; i < bars.size(); ++i) {
    const double height = axis.at(std::max(0.0, bars[i].value), plot_height);
    const double x = left + slot * double(i);
    out += rect(x + slot * 0.1, bottom - height, slot * 0.8, height, kBarColour,
                bars[i].label + ": " + with_unit(bars[i].value, decimals, unit));
    if (i % label_every == 0)
      out += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-60)\" text-anchor=\"end\">{}</text>\n",
                         x + slot / 2 + 3, bottom + 8, escape_html(bars[i].label));
  }
  out += line(left, top, left, bottom, "axis") + line(left, bottom, left + plot_width, bottom, "axis");
  return out + "</svg>\n";
}

std::string svg_stacked(const std::vector<StackedRow>& rows) {
  std::vector<std::string> parts;  // in order of first appearance: a part's colour is its index
  for (const StackedRow& row : rows)
    for (const Share& share : row.shares)
      if (std::find(parts.begin(), parts.end(), share.part) == parts.end()) parts.push_back(share.part);
  const auto colour = [&](const std::string& part) {
    const size_t index = size_t(std::find(parts.begin(), parts.end(), part) - parts.begin());
    return kPartColours[index % kPartColours.size()];
  };
  const double label_width = 240, bar_length = 600, row_height = 24, top = 4;
  const double legend_y = top + row_height * double(rows.size()) + 12;
  std::string out = svg_open(label_width + bar_length + 20, legend_y + 16);
  for (size_t r = 0; r < rows.size(); ++r) {
    const double y = top + row_height * double(r);
    out += text(label_width - 6, y + row_height / 2 + 4, "end", rows[r].label);
    double x = label_width;
    for (const Share& share : rows[r].shares) {
      const double length = std::max(0.0, share.fraction) * bar_length;
      out += rect(x, y + 2, length, row_height - 4, colour(share.part),
                  rows[r].label + ", " + share.part + ": " + number(100 * share.fraction, 1) + " %");
      if (length >= 36)
        out += text(x + length / 2, y + row_height / 2 + 4, "middle", number(100 * share.fraction, 1) + " %",
                    " style=\"fill:#fff\"");
      x += length;
    }
  }
  double x = label_width;
  for (const std::string& part : parts) {
    out += rect(x, legend_y - 9, 10, 10, colour(part), part);
    out += text(x + 14, legend_y, "start", part);
    x += 24 + 7.0 * double(part.size());
  }
  return out + "</svg>\n";
}

std::string svg_scatter(const std::vector<ScatterPoint>& points, const std::string& x_label,
                        const std::string& y_label) {
  const double left = 70, top = 10, width = 560, height = 320;
  const double bottom = top + height;
  double x_largest = 0, y_largest = 0;
  for (const ScatterPoint& point : points) {
    x_largest = std::max(x_largest, point.x);
    y_largest = std::max(y_largest, point.y);
  }
  const Axis x_axis = value_axis(x_largest), y_axis = value_axis(y_largest);
  std::string out = svg_open(left + width + 20, bottom + 40);
  for (double tick = 0; tick <= x_axis.end + x_axis.step / 2; tick += x_axis.step) {
    const double x = left + x_axis.at(tick, width);
    out += line(x, top, x, bottom, "grid") + text(x, bottom + 14, "middle", tick_label(tick));
  }
  for (double tick = 0; tick <= y_axis.end + y_axis.step / 2; tick += y_axis.step) {
    const double y = bottom - y_axis.at(tick, height);
    out += line(left, y, left + width, y, "grid") + text(left - 5, y + 4, "end", tick_label(tick));
  }
  out += text(left + width / 2, bottom + 32, "middle", x_label);
  out += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     top + height / 2, escape_html(y_label));
  std::vector<ScatterPoint> front;
  for (const ScatterPoint& point : points)
    if (point.highlighted) front.push_back(point);
  std::sort(front.begin(), front.end(), [](const ScatterPoint& a, const ScatterPoint& b) { return a.x < b.x; });
  std::string joined;
  for (const ScatterPoint& point : front)
    joined += fmt::format("{:.1f},{:.1f} ", left + x_axis.at(point.x, width), bottom - y_axis.at(point.y, height));
  if (front.size() > 1) out += "<polyline fill=\"none\" stroke=\"#f28e2b\" points=\"" + joined + "\"/>\n";
  for (const ScatterPoint& point : points)
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>\n",
                       left + x_axis.at(point.x, width), bottom - y_axis.at(point.y, height), point.highlighted ? 4 : 3,
                       point.highlighted ? "#f28e2b" : "#9a9a9a",
                       escape_html(point.label + ": " + tick_label(point.x) + ", " + tick_label(point.y)));
  out += line(left, top, left, bottom, "axis") + line(left, bottom, left + width, bottom, "axis");
  return out + "</svg>\n";
}

namespace {

// A grid drawn at about 120 x 200 cells at most, so a full WSE-3 grid stays a
// few hundred kilobytes: a cell is a block of block x block tiles.
struct CellLayout {
  uint64_t block = 1, columns = 0, rows = 0;
  double pixel = 1;

  explicit CellLayout(const NpyGrid& grid)
      : block(std::max<uint64_t>({1, (grid.width + 119) / 120, (grid.height + 199) / 200})),
        columns((grid.width + block - 1) / block),
        rows((grid.height + block - 1) / block),
        pixel(std::max(1.0, std::min(std::floor(640.0 / double(columns)), std::floor(560.0 / double(rows))))) {}
  uint64_t cell_of(uint64_t y, uint64_t x) const { return (y / block) * columns + x / block; }
  double width() const { return pixel * double(columns); }
  double height() const { return pixel * double(rows); }
};

// The cells in their colours, one rectangle per run of one colour along a row.
std::string cell_runs(const CellLayout& layout, const std::vector<std::string>& colours) {
  std::string out = "<g shape-rendering=\"crispEdges\">\n";
  for (uint64_t y = 0; y < layout.rows; ++y) {
    uint64_t run_start = 0;
    for (uint64_t x = 1; x <= layout.columns; ++x) {
      const std::string& run_colour = colours[y * layout.columns + run_start];
      if (x < layout.columns && colours[y * layout.columns + x] == run_colour) continue;
      out += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"{}\"/>",
                         layout.pixel * double(run_start), layout.pixel * double(y),
                         layout.pixel * double(x - run_start), layout.pixel, run_colour);
      run_start = x;
    }
    out += "\n";
  }
  return out + "</g>\n";
}

}  // namespace

std::string svg_heatmap(const NpyGrid& grid, const std::string& unit) {
  const CellLayout layout(grid);
  std::vector<double> cells(layout.columns * layout.rows, 0.0);
  double largest = 0;
  for (uint64_t y = 0; y < grid.height; ++y)
    for (uint64_t x = 0; x < grid.width; ++x) {
      double& cell = cells[layout.cell_of(y, x)];
      cell = std::max(cell, grid.at(y, x));
      largest = std::max(largest, grid.at(y, x));
    }
  std::vector<std::string> colours;
  for (double value : cells)
    colours.push_back(!(value > 0) || !(largest > 0)
                          ? kZeroColour
                          : kScale[std::min(kScale.size() - 1, size_t(value / largest * double(kScale.size())))]);
  std::string out = svg_open(std::max(layout.width(), 420.0) + 10, layout.height() + 40);
  out += cell_runs(layout, colours);
  const double legend_y = layout.height() + 8;
  out += rect(0, legend_y, 12, 10, kZeroColour, "0");
  for (size_t i = 0; i < kScale.size(); ++i)
    out += rect(16 + 12 * double(i), legend_y, 12, 10, kScale[i],
                tick_label(largest * double(i) / double(kScale.size())) + " to " +
                    tick_label(largest * double(i + 1) / double(kScale.size())) + " " + unit);
  out += text(0, legend_y + 24, "start", "0");
  out += text(
      16 + 12 * double(kScale.size()) + 6, legend_y + 9, "start",
      "largest " + tick_label(largest) + " " + unit +
          (layout.block > 1 ? fmt::format("; a cell is the largest of {0} x {0} tiles", layout.block) : std::string()));
  return out + "</svg>\n";
}

std::string svg_categories(const NpyGrid& grid, const std::vector<std::string>& names) {
  const CellLayout layout(grid);
  const auto category = [&](uint64_t y, uint64_t x) {
    const double value = grid.at(y, x);
    return value >= 0 && value < double(names.size()) ? size_t(value) : names.size();  // past the names: unknown
  };
  std::vector<uint64_t> tiles(names.size() + 1, 0);
  for (uint64_t y = 0; y < grid.height; ++y)
    for (uint64_t x = 0; x < grid.width; ++x) ++tiles[category(y, x)];
  // A cell shows the rarest category among its tiles: one dead tile in a block stays visible.
  std::vector<size_t> cells(layout.columns * layout.rows, names.size() + 1);
  for (uint64_t y = 0; y < grid.height; ++y)
    for (uint64_t x = 0; x < grid.width; ++x) {
      size_t& cell = cells[layout.cell_of(y, x)];
      const size_t here = category(y, x);
      if (cell > names.size() || tiles[here] < tiles[cell] || (tiles[here] == tiles[cell] && here < cell)) cell = here;
    }
  const auto colour = [](size_t c) { return kPartColours[c % kPartColours.size()]; };
  std::vector<std::string> colours;
  for (size_t c : cells) colours.push_back(c < names.size() ? colour(c) : kZeroColour);
  const double legend_y = layout.height() + 8, row = 16;
  std::string out = svg_open(std::max(layout.width(), 420.0) + 10, legend_y + row * double(names.size() + 1) + 8);
  out += cell_runs(layout, colours);
  for (size_t c = 0; c < names.size(); ++c) {
    const std::string label = fmt::format("{}: {} ({} tiles)", c, names[c], tiles[c]);
    out += rect(0, legend_y + row * double(c), 12, 10, colour(c), label);
    out += text(18, legend_y + row * double(c) + 9, "start", label);
  }
  out += text(0, legend_y + row * double(names.size()) + 9, "start",
              layout.block > 1 ? fmt::format("a cell shows the rarest category of its {0} x {0} tiles", layout.block)
                               : std::string("one cell per tile"));
  return out + "</svg>\n";
}

}  // namespace wafersim::cli
