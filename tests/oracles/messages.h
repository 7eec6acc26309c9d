#pragma once
// Closed forms of single messages on the mesh, contention off. These are the
// oracle the engine is tested against, cycle for cycle.
#include <cstdint>

#include "models/hardware.h"

namespace wafersim::oracles {

// A message (dx, dy) tiles away on the same wafer, X then Y:
// ramp_on + (|dx|+|dy|) t_hop + [dx≠0 and dy≠0] t_turn + relays * relay + ceil(B / link) + ramp_off.
uint64_t point_to_point_cycles(const FabricParams& fabric, int32_t dx, int32_t dy, uint32_t relays, uint64_t bytes);

// A message `dx` tiles along its row that first steps `side` rows off it and
// back after (Task::sidestep): |dx| + 2 |side| hops and, when it steps, two turns.
uint64_t sidestep_cycles(const FabricParams& fabric, int32_t dx, int32_t side, uint64_t bytes);

// A multicast along a row or column reaches its k-th tile (k = 1..count) after
// ramp_on + k t_hop + relays * relay + ceil(B / link) + ramp_off: one message, cut-through.
uint64_t multicast_arrival_cycles(const FabricParams& fabric, uint32_t k, uint32_t relays, uint64_t bytes);
// ... and its last tile after multicast_arrival_cycles(count).
uint64_t multicast_last_cycles(const FabricParams& fabric, uint32_t count, uint32_t relays, uint64_t bytes);

// A message to another wafer: ramp_on + latency + ceil(B / offwafer bandwidth) + ramp_off.
uint64_t offwafer_cycles(const HardwareSpec& hw, uint64_t bytes);

}  // namespace wafersim::oracles
