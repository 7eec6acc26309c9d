#include "sim/engine/fabric_timing.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "models/cost.h"

namespace wafersim::sim {

namespace {

// The head reaches a link at `head`; it may enter once the link is free, and
// the body holds the link for `serialization` cycles (cut-through).
inline uint64_t cross(LinkState& link, uint64_t head, uint64_t serialization, uint64_t* wait) {
  const uint64_t start = std::max(head, link.busy_until);
  *wait += start - head;
  link.busy_until = start + serialization;
  link.busy_cycles += serialization;
  return start;
}

inline uint64_t cross_ramp(uint64_t& busy_until, uint64_t head, uint64_t serialization, uint64_t* wait) {
  const uint64_t start = std::max(head, busy_until);
  *wait += start - head;
  busy_until = start + serialization;
  return start;
}

// The ejection ramp: a message that fits in the idle gap before the latest
// reservation takes it (earliest first in send order); else it follows that
// reservation, and the idle time between the two becomes the gap.
inline uint64_t cross_ejection(RampState& ramp, uint64_t head, uint64_t serialization, uint64_t* wait) {
  auto reserve = [&](uint64_t start) {
    const uint64_t idle = start - ramp.until;
    ramp.gap = idle > UINT32_MAX ? UINT32_MAX : uint32_t(idle);
    ramp.held = serialization > UINT32_MAX ? UINT32_MAX : uint32_t(serialization);
    ramp.until = start + serialization;
    return start;
  };
  if (head >= ramp.until) return reserve(head);  // the ramp is free: the usual case
  const uint64_t held_from = ramp.until - ramp.held, gap_from = held_from - ramp.gap;
  const uint64_t fit = std::max(head, gap_from);
  if (fit + serialization <= held_from) {
    *wait += fit - head;
    ramp.gap = uint32_t(held_from - (fit + serialization));
    return fit;
  }
  *wait += ramp.until - head;
  return reserve(ramp.until);
}

// A stream's wavelets interleave with the link's other traffic: the stream is
// not delayed, but it adds its serialisation to what later messages wait for.
inline uint64_t interleave(LinkState& link, uint64_t head, uint64_t serialization) {
  link.busy_until = std::max(head, link.busy_until) + serialization;
  link.busy_cycles += serialization;
  return head;
}

// Walks `count` links of one straight leg; returns the head after the last.
inline uint64_t walk_leg(std::vector<LinkState>& links, int64_t first, int64_t step, uint32_t count, uint64_t head,
                         uint64_t serialization, uint64_t hop, uint64_t first_extra, bool stream, uint64_t* wait) {
  LinkState* base = links.data();
  for (int64_t i = 0, index = first; i < count; ++i, index += step) {
    const uint64_t start =
        stream ? interleave(base[index], head, serialization) : cross(base[index], head, serialization, wait);
    head = start + hop + first_extra;
    first_extra = 0;
  }
  return head;
}

}  // namespace

Transit reserve_route(World& world, uint32_t source, uint32_t destination, const Task& send, uint64_t serialization,
                      uint64_t sent, bool stream) {
  const FabricParams& fabric = world.hw.fabric;
  Transit transit;
  uint64_t& injection = world.injection[source];
  const uint64_t injected = stream ? (injection = std::max(injection, sent) + serialization, sent)
                                   : cross_ramp(injection, sent, serialization, &transit.wait);
  uint64_t head = injected + fabric.ramp_on_cycles + uint64_t(send.relays) * fabric.relay_cycles;
  uint64_t x = world.place.x(source), row = world.place.row(source);
  // A leg of `length` links along x (or y) from where the route stands; its
  // first hop pays `turn`. The axis is a type (the engine's hottest path).
  auto leg = [&](auto along_x, int32_t length, uint64_t turn) {
    if (length == 0) return;
    constexpr bool kAlongX = decltype(along_x)::value;
    std::vector<LinkState>& links =
        kAlongX ? (length > 0 ? world.east : world.west) : (length > 0 ? world.south : world.north);
    const int64_t first = kAlongX ? int64_t(row * world.width + x) : int64_t(x * world.rows + row);
    head = walk_leg(links, first, length > 0 ? 1 : -1, uint32_t(std::abs(length)), head, serialization,
                    fabric.hop_latency_cycles, turn, stream, &transit.wait);
    uint64_t& position = kAlongX ? x : row;
    position = uint64_t(int64_t(position) + length);
  };
  const std::true_type along_x;
  const std::false_type along_y;
  // The plain route's first leg, then its second, which pays the turn; a
  // sidestep (models/route.h) walks before them and after, each change of axis a turn.
  const int32_t side = send.sidestep;
  const uint64_t turn = fabric.turn_latency_cycles;
  if (send.y_first) {
    leg(along_x, side, 0);
    leg(along_y, send.dy, side != 0 ? turn : 0);
    leg(along_x, send.dx - side, send.dy != 0 ? turn : 0);
  } else {
    leg(along_y, side, 0);
    leg(along_x, send.dx, side != 0 ? turn : 0);
    leg(along_y, send.dy - side, send.dx != 0 ? turn : 0);
  }
  // The detour around repaired rows and columns lengthens the head's path, not the links it reserves.
  head += world.route_detour_cycles(source, send);
  const uint64_t delivered =
      stream ? head : cross_ejection(world.ejection[destination], head, serialization, &transit.wait);
  transit.arrival = delivered + serialization + fabric.ramp_off_cycles;
  world.link_hops += route_hops(send);
  return transit;
}

Transit reserve_offwafer(World& world, uint32_t from_wafer, uint32_t to_wafer, uint64_t bytes, uint64_t sent) {
  const uint32_t bandwidth = world.hw.offwafer.bytes_per_cycle;
  const uint64_t serialization = bandwidth == 0 ? 0 : (bytes + bandwidth - 1) / bandwidth;
  Transit transit;
  const uint64_t start = cross_ramp(world.offwafer[uint64_t(from_wafer) * world.set.wafers + to_wafer], sent,
                                    serialization, &transit.wait);
  transit.arrival = start + offwafer_message_cycles(world.hw, bytes);
  world.link_hops += 1;
  return transit;
}

void reserve_multicast(World& world, uint32_t source, Dir dir, uint32_t relays, uint64_t serialization, uint64_t sent,
                       MulticastState& multicast, uint64_t* injected, bool already_injected) {
  const FabricParams& fabric = world.hw.fabric;
  const uint32_t count = multicast.count;
  multicast.pass.resize(count);
  multicast.arrival.resize(count);
  multicast.wait.resize(count);
  uint64_t wait = 0, start = 0;
  if (already_injected) {
    // The second direction of one injection: its wavelets leave the ramp with the first's.
    start = *injected;
    wait = start - sent;
  } else {
    start = cross_ramp(world.injection[source], sent, serialization, &wait);
    if (injected) *injected = start;
  }
  uint64_t head = start + fabric.ramp_on_cycles + uint64_t(relays) * fabric.relay_cycles;
  const uint64_t x = world.place.x(source), row = world.place.row(source);
  std::vector<LinkState>* links = nullptr;
  int64_t index = 0, step = 0, tile_step = 0;
  switch (dir) {
    case Dir::East: links = &world.east, index = int64_t(row * world.width + x), step = 1, tile_step = 1; break;
    case Dir::West: links = &world.west, index = int64_t(row * world.width + x), step = -1, tile_step = -1; break;
    case Dir::South:
      links = &world.south, index = int64_t(x * world.rows + row), step = 1, tile_step = world.width;
      break;
    case Dir::North:
      links = &world.north, index = int64_t(x * world.rows + row), step = -1, tile_step = -int64_t(world.width);
      break;
  }
  LinkState* base = links->data();
  for (uint32_t k = 1; k <= count; ++k, index += step) {
    head = cross(base[index], head, serialization, &wait) + fabric.hop_latency_cycles;
    const uint64_t detoured = head + world.multicast_detour_cycles(source, dir, k);
    uint64_t eject_wait = 0;
    const uint32_t tile = uint32_t(int64_t(source) + tile_step * k);
    const uint64_t eject = cross_ejection(world.ejection[tile], detoured, serialization, &eject_wait);
    multicast.pass[k - 1] = detoured + serialization + fabric.ramp_off_cycles;
    multicast.arrival[k - 1] = eject + serialization + fabric.ramp_off_cycles;
    multicast.wait[k - 1] = wait + eject_wait;
  }
  world.link_hops += count;
}

}  // namespace wafersim::sim
