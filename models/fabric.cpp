#include "models/fabric.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace wafersim {

int32_t dir_dx(Dir dir) { return dir == Dir::East ? 1 : dir == Dir::West ? -1 : 0; }
int32_t dir_dy(Dir dir) { return dir == Dir::South ? 1 : dir == Dir::North ? -1 : 0; }

const char* to_string(Dir dir) {
  switch (dir) {
    case Dir::East: return "east";
    case Dir::West: return "west";
    case Dir::South: return "south";
    case Dir::North: return "north";
  }
  return "?";
}

Route xy_route(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty) {
  Route route;
  const Dir xdir = tx >= sx ? Dir::East : Dir::West;
  const Dir ydir = ty >= sy ? Dir::South : Dir::North;
  uint32_t x = sx, y = sy;
  while (x != tx) {
    route.links.push_back({x, y, xdir});
    x = uint32_t(int64_t(x) + dir_dx(xdir));
  }
  while (y != ty) {
    route.links.push_back({x, y, ydir});
    y = uint32_t(int64_t(y) + dir_dy(ydir));
  }
  route.hops = uint32_t(route.links.size());
  route.turns = (sx != tx && sy != ty) ? 1 : 0;
  return route;
}

ColorMap::ColorMap(uint32_t grid_width, uint32_t grid_height, const FabricParams& fabric)
    : width_(grid_width),
      height_(grid_height),
      budget_(fabric.colors > fabric.colors_reserved ? fabric.colors - fabric.colors_reserved : 0),
      used_(size_t(grid_width) * grid_height, 0) {}

void ColorMap::check_inside(uint32_t x, uint32_t y) const {
  if (x >= width_ || y >= height_)
    throw std::out_of_range(fmt::format("router ({}, {}) is outside the {}x{} grid", x, y, width_, height_));
}

void ColorMap::add_route(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty) {
  check_inside(sx, sy);
  check_inside(tx, ty);
  ++used_[index(sx, sy)];
  for (const Link& link : xy_route(sx, sy, tx, ty).links)
    ++used_[index(uint32_t(int64_t(link.x) + dir_dx(link.dir)), uint32_t(int64_t(link.y) + dir_dy(link.dir)))];
}

void ColorMap::add_multicast(uint32_t x, uint32_t y, Dir dir, uint32_t count) {
  const int64_t end_x = int64_t(x) + int64_t(count) * dir_dx(dir);
  const int64_t end_y = int64_t(y) + int64_t(count) * dir_dy(dir);
  check_inside(x, y);
  if (end_x < 0 || end_y < 0) check_inside(uint32_t(-1), uint32_t(-1));
  check_inside(uint32_t(end_x), uint32_t(end_y));
  for (uint32_t k = 0; k <= count; ++k)
    ++used_[index(uint32_t(int64_t(x) + int64_t(k) * dir_dx(dir)), uint32_t(int64_t(y) + int64_t(k) * dir_dy(dir)))];
}

uint32_t ColorMap::peak() const { return used_.empty() ? 0 : *std::max_element(used_.begin(), used_.end()); }

std::vector<ColorOverflow> ColorMap::oversubscribed() const {
  std::vector<ColorOverflow> result;
  for (uint32_t y = 0; y < height_; ++y)
    for (uint32_t x = 0; x < width_; ++x)
      if (used_[index(x, y)] > budget_) result.push_back({x, y, used_[index(x, y)]});
  return result;
}

std::string ColorMap::overflow_message() const {
  const std::vector<ColorOverflow> over = oversubscribed();
  if (over.empty()) return "";
  const ColorOverflow& worst =
      *std::max_element(over.begin(), over.end(),
                        [](const ColorOverflow& a, const ColorOverflow& b) { return a.colors_used < b.colors_used; });
  return fmt::format("{} router(s) exceed the {} colours available; worst ({}, {}) carries {}", over.size(), budget_,
                     worst.x, worst.y, worst.colors_used);
}

uint32_t ColorMap::relays_needed(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty) const {
  check_inside(sx, sy);
  check_inside(tx, ty);
  const Route route = xy_route(sx, sy, tx, ty);
  uint32_t relays = 0;
  // The last link ends at the destination, which is not a relay candidate.
  for (size_t i = 0; i + 1 < route.links.size(); ++i) {
    const Link& link = route.links[i];
    const uint32_t x = uint32_t(int64_t(link.x) + dir_dx(link.dir));
    const uint32_t y = uint32_t(int64_t(link.y) + dir_dy(link.dir));
    if (used_[index(x, y)] >= budget_) ++relays;
  }
  return relays;
}

}  // namespace wafersim
