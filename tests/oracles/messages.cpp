#include "tests/oracles/messages.h"

#include <cstdlib>

#include "models/cost.h"

namespace wafersim::oracles {

uint64_t point_to_point_cycles(const FabricParams& fabric, int32_t dx, int32_t dy, uint32_t relays, uint64_t bytes) {
  const uint32_t hops = uint32_t(std::abs(int64_t(dx)) + std::abs(int64_t(dy)));
  const uint32_t turns = (dx != 0 && dy != 0) ? 1 : 0;
  return message_cycles(fabric, hops, turns, relays, bytes);
}

uint64_t sidestep_cycles(const FabricParams& fabric, int32_t dx, int32_t side, uint64_t bytes) {
  const uint32_t hops = uint32_t(std::abs(int64_t(dx)) + 2 * std::abs(int64_t(side)));
  return message_cycles(fabric, hops, side != 0 ? 2 : 0, 0, bytes);
}

uint64_t multicast_arrival_cycles(const FabricParams& fabric, uint32_t k, uint32_t relays, uint64_t bytes) {
  return message_cycles(fabric, k, 0, relays, bytes);
}

uint64_t multicast_last_cycles(const FabricParams& fabric, uint32_t count, uint32_t relays, uint64_t bytes) {
  return multicast_arrival_cycles(fabric, count, relays, bytes);
}

uint64_t offwafer_cycles(const HardwareSpec& hw, uint64_t bytes) { return offwafer_message_cycles(hw, bytes); }

}  // namespace wafersim::oracles
