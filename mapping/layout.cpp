#include "mapping/layout.h"

#include <algorithm>
#include <cmath>

namespace wafersim::mapping {

namespace {

struct Slot {
  uint32_t wafer = 0, strip = 0, top = 0, height = 0;
};

// Greedy serpentine packing of heights into strips of `grid_height` rows;
// returns false when `wafers` wafers are not enough.
bool pack(const std::vector<uint32_t>& heights, uint32_t grid_height, uint32_t strips, uint32_t wafers,
          const std::vector<uint32_t>& first_on_wafer, std::vector<Slot>* slots) {
  slots->assign(heights.size(), Slot{});
  uint32_t wafer = 0, strip = 0, used = 0;
  for (size_t r = 0; r < heights.size(); ++r) {
    if (!first_on_wafer.empty() && first_on_wafer[r] != wafer) {
      wafer = first_on_wafer[r];
      strip = 0;
      used = 0;
    }
    if (heights[r] > grid_height) return false;
    if (used + heights[r] > grid_height) {
      used = 0;
      if (++strip == strips) {
        if (!first_on_wafer.empty()) return false;  // the wafer split is fixed
        strip = 0;
        ++wafer;
      }
    }
    if (wafer >= wafers) return false;
    Slot& slot = (*slots)[r];
    slot.wafer = wafer;
    slot.strip = strip;
    slot.top = used;
    slot.height = heights[r];
    used += heights[r];
  }
  return true;
}

}  // namespace

uint32_t strip_width(const HardwareSpec& hw, const MappingOptions& options, uint32_t strips) {
  return options.fixed_layer_grid() ? options.layer_columns : hw.grid_width / strips;
}

uint32_t min_height_for(uint64_t bytes, uint32_t strip_width, uint64_t bytes_per_tile) {
  const uint64_t tiles = std::max<uint64_t>(1, (bytes + bytes_per_tile - 1) / bytes_per_tile);
  return uint32_t(std::max<uint64_t>(1, (tiles + strip_width - 1) / strip_width));
}

uint32_t wafers_needed(const std::vector<RegionNeed>& needs, const HardwareSpec& hw, uint32_t strips) {
  std::vector<uint32_t> heights;
  for (const RegionNeed& need : needs) heights.push_back(need.min_height);
  std::vector<Slot> slots;
  for (uint32_t wafers = 1; wafers <= needs.size(); ++wafers)
    if (pack(heights, hw.grid_height, strips, wafers, {}, &slots)) return wafers;
  return 0;  // some region is taller than a wafer
}

uint32_t choose_strips(const HardwareSpec& hw, const MappingOptions& options, size_t regions_per_wafer) {
  if (options.strips > 0) return std::min(options.strips, hw.grid_width);
  // k strips of width W/k hold n/k regions each of height H*k/n: aspect = W*n / (H*k*k).
  const double n = double(std::max<size_t>(1, regions_per_wafer));
  const double k = std::sqrt(double(hw.grid_width) * n / (double(hw.grid_height) * options.region_aspect));
  return uint32_t(std::clamp(std::round(k), 1.0, double(hw.grid_width)));
}

Layout place_regions(const std::vector<RegionNeed>& needs, const HardwareSpec& hw, const MappingOptions& options,
                     uint32_t wafers, uint32_t strips) {
  Layout layout;
  layout.wafers = wafers;
  layout.strips = strips;
  layout.strip_width = strip_width(hw, options, strips);

  // Balanced contiguous split of the regions over the wafers, by bytes.
  uint64_t total = 0;
  for (const RegionNeed& need : needs) total += need.bytes;
  std::vector<uint32_t> wafer_of(needs.size());
  uint64_t before = 0;
  for (size_t r = 0; r < needs.size(); ++r) {
    const double middle = double(before) + double(needs[r].bytes) / 2;
    wafer_of[r] = std::min<uint32_t>(wafers - 1, uint32_t(middle / double(std::max<uint64_t>(total, 1)) * wafers));
    before += needs[r].bytes;
  }
  std::vector<uint32_t> heights(needs.size());
  for (size_t r = 0; r < needs.size(); ++r) heights[r] = needs[r].min_height;
  std::vector<Slot> slots;
  if (!pack(heights, hw.grid_height, strips, wafers, wafer_of, &slots)) {
    wafer_of.clear();  // the byte-balanced split does not pack: fill wafers in order instead
    if (!pack(heights, hw.grid_height, strips, wafers, {}, &slots)) return layout;
    for (const Slot& slot : slots) wafer_of.push_back(slot.wafer);
  }

  if (options.use_all_tiles && !options.fixed_layer_grid()) {
    // Grow every region in proportion to its bytes as far as the strips allow:
    // `scale` is the number of strip rows the whole model would get.
    double low = 0, high = double(hw.grid_height) * strips * wafers;
    std::vector<uint32_t> grown(needs.size());
    std::vector<Slot> trial;
    for (int round = 0; round < 50; ++round) {
      const double scale = (low + high) / 2;
      for (size_t r = 0; r < needs.size(); ++r) {
        const double rows = scale * double(needs[r].bytes) / double(std::max<uint64_t>(total, 1));
        grown[r] = std::max(needs[r].min_height, uint32_t(std::min(double(hw.grid_height), rows)));
      }
      if (pack(grown, hw.grid_height, strips, wafers, wafer_of, &trial))
        low = scale, slots = trial;
      else
        high = scale;
    }
    // The last region of each strip takes the rows left at the strip's end.
    for (size_t r = 0; r < slots.size(); ++r) {
      const bool last_in_strip =
          r + 1 == slots.size() || slots[r + 1].wafer != slots[r].wafer || slots[r + 1].strip != slots[r].strip;
      if (last_in_strip) slots[r].height = hw.grid_height - slots[r].top;
    }
  }

  for (size_t r = 0; r < needs.size(); ++r) {
    const Slot& slot = slots[r];
    BlockGeometry box;
    box.wafer = slot.wafer;
    box.across_is_x = options.multicast_along_x;
    const uint32_t x0 = slot.strip * layout.strip_width;
    // The last strip takes the columns the division leaves over, so every tile has a region.
    // A fixed layer grid keeps every strip exactly that wide.
    const uint32_t width =
        slot.strip + 1 == strips && !options.fixed_layer_grid() ? hw.grid_width - x0 : layout.strip_width;
    // Serpentine: even strips fill downwards, odd strips upwards.
    const uint32_t y0 = slot.strip % 2 == 0 ? slot.top : hw.grid_height - slot.top - slot.height;
    box.x0 = x0;
    box.y0 = y0;
    box.rows = box.across_is_x ? slot.height : width;
    box.cols = box.across_is_x ? width : slot.height;
    layout.boxes.push_back(box);
  }
  return layout;
}

}  // namespace wafersim::mapping
