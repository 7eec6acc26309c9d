// The compiler counts routing patterns per step; counting every route of the
// step's programs router by router (models/fabric.h) must never find more.
#include <array>
#include <set>

#include <catch2/catch.hpp>

#include "models/fabric.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// The busiest router over the routes the tiles of `block` send in `step`. A
// route a step uses twice (the distributed attention's reduce along a group
// takes the routes of its gather, later) holds one colour.
uint32_t routed_peak(const mapping::Plan& plan, const mapping::Block& block, const mapping::Step& step) {
  ColorMap colors(plan.hw.grid_width, plan.hw.grid_height, plan.hw.fabric);
  std::set<std::array<int64_t, 5>> routes;
  for (uint32_t i = 0; i < block.geo.rows; ++i)
    for (uint32_t j = 0; j < block.geo.cols; ++j) {
      std::vector<Task> tasks;
      step.emit(i, j, tasks);
      const uint32_t x = block.geo.x(i, j), y = block.geo.y(i, j);
      for (const Task& task : tasks) {
        if (task.op == TaskOp::Send && task.dwafer == 0 && routes.insert({0, x, y, task.dx, task.dy}).second)
          colors.add_route(x, y, uint32_t(x + task.dx), uint32_t(y + task.dy));
        if (task.op == TaskOp::Multicast && routes.insert({1, x, y, int64_t(task.dir), task.count}).second)
          colors.add_multicast(x, y, task.dir, task.count);
        // The way back forks at the sender's router, which the way forward already holds: one route.
        if (task.op == TaskOp::Multicast && task.count_back > 0 &&
            routes.insert({1, x, y, int64_t(opposite(task.dir)), task.count_back}).second) {
          const Dir back = opposite(task.dir);
          colors.add_multicast(uint32_t(int64_t(x) + dir_dx(back)), uint32_t(int64_t(y) + dir_dy(back)), back,
                               task.count_back - 1);
        }
      }
    }
  return colors.peak();
}

}  // namespace

TEST_CASE("no router carries more routes in a step than the patterns the compiler counted", "[mapping][colors]") {
  for (const char* model : {"tiny-dense", "tiny-moe"}) {
    for (const char* axis : {"x", "y"})
      for (const char* dataflow : {"root", "distributed"})
        for (const char* root : {"first", "middle"}) {
          INFO(model << ", multicast along " << axis << ", " << dataflow << " dataflow, line root " << root);
          const mapping::Plan plan = compile(load_experiment_text(
              zoo_experiment(model, "tiny"), "colors.yaml",
              {std::string("mapping.multicast_axis=") + axis, std::string("mapping.dataflow=") + dataflow,
               std::string("mapping.line_root=") + root}));
          size_t steps_checked = 0;
          for (const mapping::Region& region : plan.regions)
            for (const mapping::Block& block : region.blocks)
              for (const auto& step : block.steps) {
                // The expert dispatch sends from one root to every expert row: one colour whose
                // route forks (and the results merge back on one), which ColorMap counts per route.
                if (std::string(step->label()) == "experts") continue;
                INFO(region.name << " " << step->label());
                CHECK(routed_peak(plan, block, *step) <= std::max<uint32_t>(step->patterns(), 1));
                ++steps_checked;
              }
          CHECK(steps_checked > 20);
        }
  }
}
