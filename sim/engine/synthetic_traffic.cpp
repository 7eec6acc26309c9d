#include "sim/engine/synthetic_traffic.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "models/task_builders.h"

namespace wafersim::sim {

namespace {

// A little local work between messages, so compute and fabric events interleave.
Task small_compute() { return ComputeTask().work({256, 256, 64}); }

uint64_t iterations_for(uint64_t events, uint64_t per_iteration) {
  return std::max<uint64_t>(1, (events + per_iteration - 1) / std::max<uint64_t>(per_iteration, 1));
}

void neighbour(const TrafficSpec& spec, SyntheticTraffic& out) {
  ProgramSet& set = out.programs;
  // Partners: columns pair up (0-1, 2-3, ...); an odd last column pairs its rows;
  // an odd last corner talks to itself. Every tile sends and receives one message.
  const int32_t partner[5][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {0, 0}};
  for (const auto& offset : partner)
    set.programs.push_back({{SendTask().dx(offset[0]).dy(offset[1]).tag(0).bytes(spec.bytes),
                             WaitTask().tag(0).messages(1), small_compute()}});
  const uint32_t w = spec.grid_width, h = spec.grid_height;
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint32_t program = 4;
      if (x + 1 < w || w % 2 == 0)
        program = x % 2 == 0 ? 0 : 1;
      else if (y + 1 < h || h % 2 == 0)
        program = y % 2 == 0 ? 2 : 3;
      set.tile_program[uint64_t(y) * w + x] = program;
    }
  out.events_per_iteration = set.tiles() * 4;  // send, delivery, wait, compute
}

void random_offsets(const TrafficSpec& spec, SyntheticTraffic& out) {
  ProgramSet& set = out.programs;
  const uint32_t w = spec.grid_width, h = spec.grid_height, rounds = spec.random_rounds;
  std::mt19937_64 generator(spec.seed);
  std::vector<uint32_t> dx(rounds), dy(rounds);
  for (uint32_t r = 0; r < rounds; ++r) dx[r] = uint32_t(generator() % w), dy[r] = uint32_t(generator() % h);
  // A tile at x wraps in round r when x >= w - dx[r]; ranking the rounds by that
  // threshold, the tiles with c thresholds at or below x wrap in the first c rounds.
  auto rank = [rounds](const std::vector<uint32_t>& offsets, uint32_t extent) {
    std::vector<uint32_t> order(rounds);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return extent - offsets[a] < extent - offsets[b]; });
    std::vector<uint32_t> position(rounds);
    for (uint32_t i = 0; i < rounds; ++i) position[order[i]] = i;
    return position;
  };
  const std::vector<uint32_t> xrank = rank(dx, w), yrank = rank(dy, h);
  for (uint32_t cy = 0; cy <= rounds; ++cy)
    for (uint32_t cx = 0; cx <= rounds; ++cx) {
      Program program;
      for (uint32_t r = 0; r < rounds; ++r) {
        const int32_t rx = xrank[r] < cx ? int32_t(dx[r]) - int32_t(w) : int32_t(dx[r]);
        const int32_t ry = yrank[r] < cy ? int32_t(dy[r]) - int32_t(h) : int32_t(dy[r]);
        program.tasks.push_back(SendTask().dx(rx).dy(ry).tag(uint16_t(r)).bytes(spec.bytes));
        program.tasks.push_back(WaitTask().tag(uint16_t(r)).messages(1));
      }
      set.programs.push_back(program);
    }
  auto wraps_before = [rounds](const std::vector<uint32_t>& offsets, uint32_t extent, uint32_t coordinate) {
    uint32_t count = 0;
    for (uint32_t r = 0; r < rounds; ++r) count += coordinate >= extent - offsets[r] ? 1 : 0;
    return count;
  };
  std::vector<uint32_t> xclass(w), yclass(h);
  for (uint32_t x = 0; x < w; ++x) xclass[x] = wraps_before(dx, w, x);
  for (uint32_t y = 0; y < h; ++y) yclass[y] = wraps_before(dy, h, y);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) set.tile_program[uint64_t(y) * w + x] = yclass[y] * (rounds + 1) + xclass[x];
  out.events_per_iteration = set.tiles() * 3 * rounds;  // send, delivery, wait per round
}

void row_multicast(const TrafficSpec& spec, SyntheticTraffic& out) {
  ProgramSet& set = out.programs;
  const uint32_t w = spec.grid_width, h = spec.grid_height;
  if (w < 2) throw std::invalid_argument("multicast traffic needs rows of at least 2 tiles");
  // The two ends of a row multicast to each other with tags 0 (eastward) and 1 (westward).
  const Task east = MulticastTask().dir(Dir::East).tiles(w - 1).tag(0).bytes(spec.bytes);
  const Task west = MulticastTask().dir(Dir::West).tiles(w - 1).tag(1).bytes(spec.bytes);
  const Task from_west = WaitTask().tag(0).messages(1), from_east = WaitTask().tag(1).messages(1);
  set.programs.push_back({{east, from_east}});
  set.programs.push_back({{west, from_west}});
  set.programs.push_back({{from_west, from_east, small_compute()}});
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) set.tile_program[uint64_t(y) * w + x] = x == 0 ? 0 : x + 1 == w ? 1 : 2;
  // Per row: 2 tasks at each end, 3 in between, and 2 (w - 1) deliveries.
  out.events_per_iteration = uint64_t(h) * (4 + 3 * uint64_t(w - 2) + 2 * uint64_t(w - 1));
}

}  // namespace

const std::vector<TrafficKind>& traffic_kinds() {
  static const std::vector<TrafficKind> kinds = {
      // Tiles exchange a message with a neighbour one hop away, then compute.
      {"neighbour", 100, 1, &neighbour},
      // Rounds of messages to seeded random offsets, wrapping around the wafer:
      // one iteration of four rounds of long routes.
      {"random", 12, 1, &random_offsets},
      // Both ends of every row multicast along the whole row.
      {"multicast", 50, 2, &row_multicast},
  };
  return kinds;
}

const TrafficKind* find_traffic(const std::string& name) {
  for (const TrafficKind& kind : traffic_kinds())
    if (name == kind.name) return &kind;
  return nullptr;
}

std::string traffic_names(const char* separator) {
  std::string names;
  for (const TrafficKind& kind : traffic_kinds()) names += (names.empty() ? "" : separator) + std::string(kind.name);
  return names;
}

SyntheticTraffic make_traffic(const TrafficSpec& spec) {
  SyntheticTraffic out;
  ProgramSet& set = out.programs;
  set.grid_width = spec.grid_width;
  set.grid_height = spec.grid_height;
  set.tile_program.assign(set.tiles(), ProgramSet::kIdle);
  const TrafficKind* kind = find_traffic(spec.traffic);
  if (kind == nullptr) throw std::invalid_argument("no traffic kind is called '" + spec.traffic + "'");
  kind->make(spec, out);
  set.iterations = iterations_for(spec.events, out.events_per_iteration);
  return out;
}

}  // namespace wafersim::sim
