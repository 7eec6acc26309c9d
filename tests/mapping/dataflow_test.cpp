// mapping.dataflow: the distributed dataflow keeps dense and MoE layers'
// activations on slices instead of passing every vector through the region
// root. It must be faster than the root dataflow on dense models (a regression
// that brings the hub back fails here), and it must leave the embedding and
// the LM head alone.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/timeline.h"
#include "mapping/verify_plan.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/decode_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

Decoded decode(const std::string& text, const std::string& dataflow, std::vector<std::string> overrides = {}) {
  overrides.push_back("mapping.dataflow=" + dataflow);
  return decode_text(text, overrides);
}

uint64_t last_exit(const mapping::DecodeTimeline& timeline) {
  uint64_t last = 0;
  for (uint64_t cycle : timeline.finish.back()) last = std::max(last, cycle);
  return last;
}

// Cycles the first iteration spends in region r.
uint64_t region_cycles(const Decoded& decoded, size_t r) {
  return decoded.timeline.finish[r][0] - decoded.timeline.start[r][0];
}

std::string first_step(const mapping::Region& region) { return region.blocks[0].steps.front()->label(); }

}  // namespace

TEST_CASE("the distributed dataflow is faster than the root dataflow on dense layers", "[mapping][dataflow]") {
  struct Case {
    std::string model, hardware;
    double at_most;  // distributed layer cycles / root layer cycles
  };
  // Llama 3.1 8B on WSE-3: the root hub takes most of a layer's time, so the distributed layer is far faster.
  for (const Case& c : {Case{"tiny-dense", "tiny", 0.95}, Case{"llama3.1-8b", "wse3", 0.6}}) {
    INFO(c.model << " on " << c.hardware);
    const std::string text = zoo_experiment(c.model, c.hardware, 1024, 2);
    const Decoded root = decode(text, "root"), distributed = decode(text, "distributed");
    REQUIRE(root.plan.regions.size() == distributed.plan.regions.size());
    for (size_t r = 1; r + 1 < root.plan.regions.size(); ++r) {
      INFO(root.plan.regions[r].name << ": root " << region_cycles(root, r) << " cycles, distributed "
                                     << region_cycles(distributed, r));
      // Layers take their slices from the previous region's root column (mapping.handoff: slices).
      CHECK(distributed.plan.regions[r].slices_in);
      CHECK(first_step(distributed.plan.regions[r]) == "input_norm_stats");
      CHECK(double(region_cycles(distributed, r)) <= c.at_most * double(region_cycles(root, r)));
    }
    CHECK(last_exit(distributed.timeline) < last_exit(root.timeline));
  }
}

TEST_CASE("the distributed dataflow leaves the embedding and LM head as they are and puts MoE layers on slices",
          "[mapping][dataflow]") {
  const std::string text = zoo_experiment("tiny-moe", "tiny", 64, 2);
  // The same reduction, MoE combine and hand-off for both, so that only the dataflow differs.
  const std::vector<std::string> mixed = {"model.moe.layers=[1]", "model.ffn_dim=512", "mapping.reduction=tree",
                                          "mapping.moe_combine=tree", "mapping.handoff=root"};
  const Decoded root = decode(text, "root", mixed), distributed = decode(text, "distributed", mixed);
  REQUIRE(root.plan.regions.size() == 4);
  for (size_t r : {size_t(0), size_t(3)}) {
    INFO(root.plan.regions[r].name);
    const auto& a = root.plan.regions[r].blocks[0].steps;
    const auto& b = distributed.plan.regions[r].blocks[0].steps;
    REQUIRE(a.size() == b.size());
    for (size_t s = 0; s < a.size(); ++s) CHECK(std::string(a[s]->label()) == b[s]->label());
    CHECK(region_cycles(root, r) == region_cycles(distributed, r));
  }
  for (size_t r : {size_t(1), size_t(2)}) {
    CHECK(first_step(root.plan.regions[r]) == "input_norm");
    CHECK(first_step(distributed.plan.regions[r]) == "scatter");
  }
  // The MoE layer's attention runs on slices: its vector meets the root only to be routed and dispatched.
  std::vector<std::string> moe_steps;
  for (const auto& step : distributed.plan.regions[2].blocks[0].steps) moe_steps.push_back(step->label());
  for (const char* label : {"input_norm_stats", "attention", "mlp_norm_scale", "gather_mlp_input", "experts",
                            "scatter_moe_output", "residual_slices", "gather_residual"})
    CHECK(std::count(moe_steps.begin(), moe_steps.end(), label) == 1);
  for (const char* label : {"input_norm", "gather_qkv", "gather_o", "residual_norm", "residual"})
    CHECK(std::count(moe_steps.begin(), moe_steps.end(), label) == 0);
  // The expert blocks run the root dataflow's FFN; a routed expert scales its
  // result on the root row's slices before the gather instead of at its root after it.
  REQUIRE(root.plan.regions[2].blocks.size() == distributed.plan.regions[2].blocks.size());
  for (size_t b = 1; b < root.plan.regions[2].blocks.size(); ++b) {
    std::vector<std::string> a, d;
    for (const auto& step : root.plan.regions[2].blocks[b].steps) a.push_back(step->label());
    for (const auto& step : distributed.plan.regions[2].blocks[b].steps) d.push_back(step->label());
    CHECK(a == std::vector<std::string>{"gate_up_proj", "activation", "down_proj", "gather_down", "expert_scale"});
    CHECK(d == std::vector<std::string>{"gate_up_proj", "activation", "down_proj", "expert_scale", "gather_down"});
  }
}

TEST_CASE("16-bit partial sums shorten every dense layer's reductions", "[mapping][dataflow]") {
  const std::string text = zoo_experiment("llama3.1-8b", "wse3", 1024, 2);
  for (const char* dataflow : {"root", "distributed"}) {
    const Decoded fp32 = decode(text, dataflow), fp16 = decode(text, dataflow, {"mapping.partial_sum_dtype=fp16"});
    REQUIRE(fp32.plan.regions.size() == fp16.plan.regions.size());
    for (size_t r = 1; r + 1 < fp32.plan.regions.size(); ++r) {
      INFO(dataflow << " " << fp32.plan.regions[r].name << ": fp32 " << region_cycles(fp32, r) << " cycles, fp16 "
                    << region_cycles(fp16, r));
      CHECK(region_cycles(fp16, r) < region_cycles(fp32, r));
    }
    CHECK(last_exit(fp16.timeline) < last_exit(fp32.timeline));
  }
}

TEST_CASE("the slices hand-off moves the scatter into the embedding and the gather into the LM head",
          "[mapping][dataflow][handoff]") {
  // A dense layer between the embedding and an MoE layer: slices all the way,
  // the MoE layer's included; with the root hand-off the MoE layer scatters and gathers.
  const std::vector<std::string> mixed = {"model.moe.layers=[1]", "model.ffn_dim=512"};
  const std::string moe = zoo_experiment("tiny-moe", "tiny", 64, 2);
  const Decoded slices = decode(moe, "distributed", mixed);
  std::vector<std::string> root_mixed = mixed;
  root_mixed.push_back("mapping.handoff=root");
  root_mixed.push_back("mapping.multicast_axis=y");  // the axis auto picks with slices
  const Decoded root = decode(moe, "distributed", root_mixed);
  const auto& regions = slices.plan.regions;
  REQUIRE(regions.size() == 4);
  CHECK(std::string(regions[0].blocks[0].steps.back()->label()) == "scatter");
  CHECK((regions[0].slices_out && regions[1].slices_in));
  CHECK(first_step(regions[1]) == "input_norm_stats");
  CHECK((regions[1].slices_out && regions[2].slices_in && regions[2].slices_out && regions[3].slices_in));
  CHECK(std::string(regions[1].blocks[0].steps.back()->label()) == "residual_slices");
  CHECK(first_step(regions[2]) == "input_norm_stats");
  CHECK(std::string(regions[2].blocks[0].steps.back()->label()) == "residual_slices");
  CHECK(first_step(regions[3]) == "gather_input");
  const auto& a = root.plan.regions[2].blocks[0].steps;
  CHECK(std::string(a.front()->label()) == "scatter");
  CHECK(std::string(a.back()->label()) == "gather_residual");
  CHECK(a.size() == regions[2].blocks[0].steps.size() + 2);

  // Dense layers in one strip: the LM head gathers, and with axis y (auto)
  // every slice goes straight along its own physical column, one piece per tile.
  const Decoded dense = decode(zoo_experiment("tiny-dense", "tiny", 64, 2), "distributed", {"mapping.strips=1"});
  const mapping::Plan& plan = dense.plan;
  CHECK(!plan.options.multicast_along_x);
  CHECK(first_step(plan.regions.back()) == "gather_input");
  const mapping::BlockGeometry& from = plan.regions[1].blocks[0].geo;
  REQUIRE(plan.handoffs[1].size() == from.rows);
  std::set<uint32_t> columns;
  for (const mapping::Plan::HandoffPiece& piece : plan.handoffs[1]) {
    CHECK(piece.from == piece.to);
    CHECK(piece.send.dx == 0);
    CHECK(piece.send.dwafer == 0);
    columns.insert(from.x(piece.from, 0));
  }
  CHECK(columns.size() == from.rows);
}

// Speculative decoding's verify plans rebuild the decode plan's regions: they
// must keep its hand-off, or every layer would scatter and gather through its
// root again and a verify pass would cost far more than decode's tokens.
TEST_CASE("verify plans keep the decode plan's slices hand-off", "[mapping][dataflow][handoff]") {
  const Decoded decoded = decode(zoo_experiment("tiny-dense", "tiny", 64, 2), "distributed");
  for (const mapping::Plan& verify :
       {mapping::compile_verify_plan(decoded.plan, 5), mapping::compile_pipelined_verify_plan(decoded.plan, 5)}) {
    REQUIRE(verify.regions.size() == decoded.plan.regions.size());
    for (size_t r = 0; r < verify.regions.size(); ++r) {
      INFO(verify.regions[r].name);
      CHECK(verify.regions[r].slices_in == decoded.plan.regions[r].slices_in);
      CHECK(verify.regions[r].slices_out == decoded.plan.regions[r].slices_out);
      CHECK(first_step(verify.regions[r]) == first_step(decoded.plan.regions[r]));
    }
    CHECK(decoded.plan.regions[1].slices_in);
  }
}
