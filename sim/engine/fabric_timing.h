#pragma once
// Link reservation under contention. A message reserves every link of its
// route when it is sent (in send order), not hop by hop as its head advances:
// see docs/ARCHITECTURE.md for the approximation and its effect.
#include <cstdint>
#include <vector>

#include "sim/engine/world.h"

namespace wafersim::sim {

struct Transit {
  uint64_t arrival = 0;  // delivery cycle at the destination core
  uint64_t wait = 0;     // cycles the head spent waiting for busy links and ramps
};

// A message from `source` to `destination` on the same wafer along the route
// of `send` (models/route.h), sent at cycle `sent`. With no other traffic,
// arrival = sent + message_cycles. A stream (Task::stream) waits for nothing:
// its wavelets interleave with the links' other traffic, which waits for them,
// and the receiving core counts its input ramp in its own ingest (models/cost.h).
Transit reserve_route(World& world, uint32_t source, uint32_t destination, const Task& send, uint64_t serialization,
                      uint64_t sent, bool stream = false);

// A message between wafers over the one channel from `from_wafer` to `to_wafer`.
Transit reserve_offwafer(World& world, uint32_t from_wafer, uint32_t to_wafer, uint64_t bytes, uint64_t sent);

// A multicast from `source` through the next `count` tiles towards `dir`;
// Fills the pass, arrival and wait cycles of `multicast` (see MulticastState).
// `injected` (optional): when the source's router already has the message (a
// second direction of one injection); else it crosses the source's injection
// ramp, and `injected` receives when it left it.
void reserve_multicast(World& world, uint32_t source, Dir dir, uint32_t relays, uint64_t serialization, uint64_t sent,
                       MulticastState& multicast, uint64_t* injected, bool already_injected);

}  // namespace wafersim::sim
