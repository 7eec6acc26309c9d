#pragma once
// Synthetic traffic for `wafersim bench engine` and the engine tests: program
// sets that exercise the mesh without a model.
#include <cstdint>
#include <string>

#include "models/tile_program.h"

namespace wafersim::sim {

enum class Traffic {
  Neighbour,  // tiles exchange a message with a neighbour one hop away, then compute
  Random,     // rounds of messages to seeded random offsets, wrapping around the wafer
  Multicast,  // both ends of every row multicast along the whole row
};

bool parse_traffic(const std::string& name, Traffic* traffic);
const char* to_string(Traffic traffic);

struct TrafficSpec {
  Traffic traffic = Traffic::Neighbour;
  uint32_t grid_width = 0, grid_height = 0;
  uint64_t events = 0;  // iterations are chosen to process about this many events
  uint64_t seed = 1;
  uint32_t bytes = 64;         // payload of every message
  uint32_t random_rounds = 4;  // Random: offsets per iteration
};

struct SyntheticTraffic {
  ProgramSet programs;
  uint64_t events_per_iteration = 0;  // exact: tasks plus deliveries
};

// Random traffic: in round r every tile (x, y) sends to ((x + dx_r) mod width,
// (y + dy_r) mod height), so each destination is uniformly distributed over the
// wafer while every tile receives exactly one message per round and the programs
// stay a few templates (one per pattern of wrapped rounds).
SyntheticTraffic make_traffic(const TrafficSpec& spec);

// Context 1 and no routed experts in every iteration.
class SteadyInputs : public IterationInputs {
 public:
  uint64_t context(uint64_t) const override { return 1; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return false; }
};

}  // namespace wafersim::sim
