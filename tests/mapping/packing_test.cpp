// Packing: tiles that keep more activation buffers than others take fewer
// weights (edge relief, mapping/compile.cpp), and attention tiles that hold no
// position at the workload's largest context keep no attention buffers, so
// Llama 3.1 70B at 16-bit fits four WSE-3 as Cerebras serves it.
#include <algorithm>

#include <catch2/catch.hpp>

#include "mapping/plan.h"
#include "mapping/tile_sram.h"
#include "models/config/error.h"
#include "sim/experiment/experiment.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/model_spec.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

mapping::Plan cerebras_70b(const std::vector<std::string>& overrides = {}) {
  return compile(load_experiment(
      std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/validation/cerebras-llama3.1-70b-4-cs3.yaml",
      overrides));
}

bool relieved(const mapping::BlockGeometry& geo) { return !geo.even_split(); }

}  // namespace

TEST_CASE("Llama 3.1 70B at 16-bit fits four WSE-3, its edge tiles relieved of weights", "[mapping][packing]") {
  const mapping::Plan plan = cerebras_70b();
  REQUIRE(plan.hw.wafers == 4);
  CHECK(plan.sram_peak_bytes <= plan.hw.tile.sram_bytes);
  CHECK(plan.max_context_tokens >= plan.workload.max_context());
  const workloads::ParamCounts counts = workloads::count_params(plan.model);
  uint64_t elements = 0;
  for (const mapping::RegionStats& stats : plan.stats) elements += stats.weight_elements;
  CHECK(elements == counts.total);
  const size_t relieved_regions = size_t(std::count_if(plan.regions.begin(), plan.regions.end(),
                                                       [](const mapping::Region& r) { return relieved(r.box); }));
  CHECK(relieved_regions > 0);

  // Every tile of the first layer region and of the LM head, tile by tile:
  // each weight once, none over its SRAM, and the fullest the one the compiler measured.
  for (size_t r : {size_t(1), plan.regions.size() - 1}) {
    const mapping::Region& region = plan.regions[r];
    INFO(region.name);
    const mapping::Block& block = region.blocks.at(0);
    uint64_t weight_elements = 0, peak = 0;
    for (uint32_t i = 0; i < block.geo.rows; ++i)
      for (uint32_t j = 0; j < block.geo.cols; ++j) {
        const mapping::TileSram sram =
            mapping::tile_sram(block, i, j, plan.workload.max_context(), plan.options.stream_buffer_bytes);
        weight_elements += sram.weight_elements;
        peak = std::max(peak, plan.hw.tile.runtime_reserved_bytes + sram.weights + sram.kv + sram.activations);
      }
    CHECK(weight_elements == plan.stats[r].weight_elements);
    CHECK(peak == plan.stats[r].sram_peak_bytes);
    CHECK(peak <= plan.hw.tile.sram_bytes);
  }

  // Three wafers do not hold it.
  CHECK_THROWS_AS(cerebras_70b({"hardware.wafers=3"}), mapping::DoesNotFitError);
}

// With multicast_axis: auto the compiler prefers y where slices are handed on;
// at a 2,304-token context a root row a strip wide leaves the last layer's
// tiles too little room, so four wafers hold 70B only along x, which auto takes.
TEST_CASE("multicast axis auto falls back to x where only x fits the wafers", "[mapping][packing]") {
  // One copy of each KV head: copies take SRAM and would change which layouts fit.
  const std::vector<std::string> longer = {"workload.prompt_tokens=2048", "workload.decode_tokens=256",
                                           "mapping.kv_head_copies=1"};
  std::vector<std::string> along_y = longer;
  along_y.push_back("mapping.multicast_axis=y");
  CHECK_THROWS_AS(cerebras_70b(along_y), mapping::DoesNotFitError);
  const mapping::Plan plan = cerebras_70b(longer);
  CHECK(plan.hw.wafers == 4);
  CHECK(plan.options.multicast_along_x);
  CHECK(plan.options.slices_handoff());
  // With wafers: auto, the axis that needs fewer wafers.
  std::vector<std::string> any = longer;
  any.push_back("hardware.wafers=auto");
  const mapping::Plan fewest = cerebras_70b(any);
  CHECK(fewest.hw.wafers == 4);
  CHECK(fewest.options.multicast_along_x);
  // Where y fits, auto keeps it.
  CHECK(!cerebras_70b().options.multicast_along_x);
}

TEST_CASE("a relieved split gives row 0 and the relieved columns fewer elements and adds up", "[mapping][packing]") {
  mapping::BlockGeometry geo;
  geo.rows = 5;
  geo.cols = 4;
  CHECK(geo.row_share(103, 0) == 21);  // even: lower indices take the remainder
  CHECK(geo.largest_row_share(103) == 21);
  geo.row0_permille = 500;
  geo.set_column_weights({1, 2, 2, 3});
  uint64_t rows = 0, columns = 0;
  for (uint32_t i = 0; i < geo.rows; ++i) rows += geo.row_share(1000, i);
  for (uint32_t j = 0; j < geo.cols; ++j) columns += geo.column_share(1000, j);
  CHECK(rows == 1000);
  CHECK(columns == 1000);
  CHECK(geo.row_share(1000, 0) == 1000 * 500 / 4500);  // half of another row's share
  CHECK(geo.row_share(1000, 1) >= geo.row_share(1000, 4));
  CHECK(geo.column_share(1000, 0) == 125);
  CHECK(geo.column_share(1000, 3) == 375);
  CHECK(geo.largest_column_share(1000) == 375);
  CHECK(geo.largest_row_share(1000) == geo.row_share(1000, 1));
}

TEST_CASE("tiny-dense with a wide MLP fits one tiny wafer only with relieved edge tiles", "[mapping][packing]") {
  for (const char* dataflow : {"mapping.dataflow=root", "mapping.dataflow=distributed"}) {
    INFO(dataflow);
    const mapping::Plan plan =
        // Along x the layers' root columns are their tall sides: the geometry this wafer fits with.
        compile(load_experiment(experiment_path("tiny-dense"),
                                {"model.ffn_dim=2688", "hardware.wafers=1", "mapping.multicast_axis=x", dataflow}));
    CHECK(plan.sram_peak_bytes <= plan.hw.tile.sram_bytes);
    CHECK(std::any_of(plan.regions.begin(), plan.regions.end(),
                      [](const mapping::Region& r) { return relieved(r.box); }));
  }
}
