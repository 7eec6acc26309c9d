// mapping.line_root: which plans root their lines in the middle, and weights
// that stay on their tiles from the decode plan to the prefill's.
#include <catch2/catch.hpp>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// A block's GEMVs, in order.
std::vector<const mapping::Step*> gemvs(const mapping::Block& block) {
  std::vector<const mapping::Step*> out;
  for (const auto& step : block.steps)
    if (dynamic_cast<const mapping::GemvToColumnStep*>(step.get()) ||
        dynamic_cast<const mapping::GemvToRowStep*>(step.get()))
      out.push_back(step.get());
  return out;
}

// Whether every tile holds the same GEMV weight blocks in both regions (the norm weights and biases follow each
// plan's root line: docs/MAPPING.md, "Middle roots").
bool same_gemv_weights(const mapping::Region& a, const mapping::Region& b) {
  const mapping::BlockGeometry& g = a.blocks[0].geo;
  const std::vector<const mapping::Step*> x = gemvs(a.blocks[0]), y = gemvs(b.blocks[0]);
  if (x.empty() || x.size() != y.size()) return false;
  for (size_t s = 0; s < x.size(); ++s)
    for (uint32_t i = 0; i < g.rows; ++i)
      for (uint32_t j = 0; j < g.cols; ++j)
        if (x[s]->weight_elements(i, j) != y[s]->weight_elements(i, j)) return false;
  return true;
}

}  // namespace

TEST_CASE("middle_in_decode roots the decode plan's lines in the middle and the prefill's first, weights unmoved",
          "[mapping][middle]") {
  // Llama 3.1 70B on four WSE-3: its layer regions are relieved (their root row keeps fewer weights).
  const Experiment experiment = load_experiment_text(zoo_experiment("llama3.1-70b", "wse3", 1024, 2), "70b.yaml",
                                                     {"mapping.line_root=middle_in_decode", "hardware.wafers=4"});
  const mapping::Plan decode = compile(experiment);
  const mapping::Plan prefill = mapping::compile_prefill_plan(decode);
  size_t relieved = 0;
  for (size_t r = 0; r < prefill.regions.size(); ++r) {
    const mapping::Region &d = decode.regions[r], &p = prefill.regions[r];
    INFO(d.name);
    CHECK(d.box.middle_roots);
    CHECK_FALSE(p.box.middle_roots);
    if (d.kind != mapping::RegionKind::Dense) continue;
    CHECK(d.box.root_i() > 0);
    if (d.box.row0_permille < 1000) {
      ++relieved;
      CHECK(d.box.relieved_row == d.box.root_i());
    }
    // The same weight blocks on the same tiles, whichever row roots each plan.
    CHECK(same_gemv_weights(d, p));
  }
  CHECK(relieved > 0);
}
