#pragma once
// Synthetic traffic for `wafersim bench engine` and the engine tests: program
// sets that exercise the mesh without a model.
#include <cstdint>
#include <string>
#include <vector>

#include "models/tile_program.h"

namespace wafersim::sim {

struct TrafficSpec {
  std::string traffic = "neighbour";  // a TrafficKind's name
  uint32_t grid_width = 0, grid_height = 0;
  uint64_t events = 0;  // iterations are chosen to process about this many events
  uint64_t seed = 1;
  uint32_t bytes = 64;         // payload of every message
  uint32_t random_rounds = 4;  // random: offsets per iteration
};

struct SyntheticTraffic {
  ProgramSet programs;
  uint64_t events_per_iteration = 0;  // exact: tasks plus deliveries
};

// One kind of traffic, declared once with everything that names or sizes it,
// so the names `bench engine` accepts and the programs it makes cannot drift apart.
struct TrafficKind {
  const char* name;
  uint64_t default_events_per_tile;  // a few seconds of run at the engine's measured speed
  uint32_t min_grid_width;           // narrower grids cannot carry it
  void (*make)(const TrafficSpec& spec, SyntheticTraffic& out);
};
const std::vector<TrafficKind>& traffic_kinds();
const TrafficKind* find_traffic(const std::string& name);  // nullptr when no kind has that name
std::string traffic_names(const char* separator);          // "neighbour | random | multicast"

// The programs of spec.traffic (an unknown name throws std::invalid_argument).
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
