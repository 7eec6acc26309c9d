#pragma once
// Routes on the 2D mesh and colour (static route) accounting per router.
// The engine steps along links with dir_dx/dir_dy; the compiler counts colours
// per step as routing patterns (Step::patterns), and ColorMap, counting every
// route router by router, is the reference the tests hold those counts to.
#include <cstdint>
#include <string>
#include <vector>

#include "models/hardware.h"
#include "models/tile_program.h"

namespace wafersim {

// A directed link leaves router (x, y) towards `dir`.
struct Link {
  uint32_t x = 0, y = 0;
  Dir dir = Dir::East;
  bool operator==(const Link& other) const { return x == other.x && y == other.y && dir == other.dir; }
};

// Dimension-ordered route: all X links first, then all Y links.
struct Route {
  uint32_t hops = 0;   // |dx| + |dy|
  uint32_t turns = 0;  // 1 when the route has both X and Y links
  std::vector<Link> links;
};

// The X-then-Y route from (sx, sy) to (tx, ty).
Route xy_route(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty);

// (dx, dy) of one step towards `dir`.
int32_t dir_dx(Dir dir);
int32_t dir_dy(Dir dir);
const char* to_string(Dir dir);

// Routers with more routes than they can hold.
struct ColorOverflow {
  uint32_t x = 0, y = 0;
  uint32_t colors_used = 0;
};

// Counts the colours each router of one wafer carries. A route takes one colour
// on every router it crosses, its source and destination routers included.
class ColorMap {
 public:
  ColorMap(uint32_t grid_width, uint32_t grid_height, const FabricParams& fabric);

  void add_route(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty);
  // A multicast segment from (x, y) through the next `count` routers towards `dir`.
  void add_multicast(uint32_t x, uint32_t y, Dir dir, uint32_t count);

  uint32_t colors_used(uint32_t x, uint32_t y) const { return used_[index(x, y)]; }
  // Colours a router offers to programs: colors - colors_reserved.
  uint32_t budget() const { return budget_; }
  uint32_t peak() const;
  // Every router above budget, in (y, x) order.
  std::vector<ColorOverflow> oversubscribed() const;
  // "12 routers exceed the 21 colours available; worst (3, 4) carries 25": empty when none.
  std::string overflow_message() const;

  // Relays the route from (sx, sy) to (tx, ty) needs: every router strictly
  // between source and destination that has no colour left makes the message
  // leave the fabric there and be forwarded by that router's core.
  uint32_t relays_needed(uint32_t sx, uint32_t sy, uint32_t tx, uint32_t ty) const;

 private:
  size_t index(uint32_t x, uint32_t y) const { return size_t(y) * width_ + x; }
  void check_inside(uint32_t x, uint32_t y) const;

  uint32_t width_, height_, budget_;
  std::vector<uint32_t> used_;
};

}  // namespace wafersim
