#pragma once
// The path of a point-to-point message on one wafer: up to three straight
// legs. A route runs x first (or y first, Task::y_first). A sidestep
// (Task::sidestep) first moves across that first axis and comes back after
// it, so pieces that would all run along one row (or column) can each take a
// row of their own; the router is configured either way, so the path is free.
#include <array>
#include <cstdint>

#include "models/cost.h"
#include "models/tile_program.h"

namespace wafersim {

struct RouteLeg {
  bool along_x = true;
  int32_t length = 0;  // signed: east / south positive
};

struct SendRoute {
  std::array<RouteLeg, 3> legs;

  uint32_t hops() const {
    uint32_t hops = 0;
    for (const RouteLeg& leg : legs) hops += uint32_t(leg.length < 0 ? -int64_t(leg.length) : leg.length);
    return hops;
  }
  // A turn wherever a leg runs along the other axis than the leg before it.
  uint32_t turns() const {
    uint32_t turns = 0;
    const RouteLeg* previous = nullptr;
    for (const RouteLeg& leg : legs) {
      if (leg.length == 0) continue;
      if (previous && previous->along_x != leg.along_x) ++turns;
      previous = &leg;
    }
    return turns;
  }
};

inline SendRoute send_route(int32_t dx, int32_t dy, bool y_first, int32_t sidestep) {
  if (y_first) return {{RouteLeg{true, sidestep}, RouteLeg{false, dy}, RouteLeg{true, dx - sidestep}}};
  return {{RouteLeg{false, sidestep}, RouteLeg{true, dx}, RouteLeg{false, dy - sidestep}}};
}

inline SendRoute send_route(const Task& send) { return send_route(send.dx, send.dy, send.y_first, send.sidestep); }

// The links a send crosses (the engine's hot path: the plain route without building its legs).
inline uint32_t route_hops(const Task& send) {
  if (send.sidestep != 0) return send_route(send).hops();
  return uint32_t((send.dx < 0 ? -int64_t(send.dx) : send.dx) + (send.dy < 0 ? -int64_t(send.dy) : send.dy));
}

// A send on one wafer alone on the fabric (message_cycles over its route):
// the closed form's and the engine's contention-free cost alike.
inline uint64_t route_message_cycles(const FabricParams& fabric, const Task& send) {
  const SendRoute route = send_route(send);
  return message_cycles(fabric, route.hops(), route.turns(), send.relays, send.bytes);
}

}  // namespace wafersim
