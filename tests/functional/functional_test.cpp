// sim.functional: the plan evaluated on real numbers must match the Eigen
// forward pass of the same model and weights, under every dataflow and
// reduction fan-in, and a plan that loses one partial sum must be caught and
// named.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/functional/check.h"
#include "sim/functional/numbers.h"
#include "sim/functional/program_check.h"
#include "sim/functional/reference.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;
using functional::check_functional;
using functional::FunctionalReport;

namespace {

// A tiny model on the tiny wafer: a short prompt and a few decoded tokens.
mapping::Plan tiny_plan(const std::string& model, std::vector<std::string> overrides, uint64_t prompt = 6,
                        uint64_t decode = 3) {
  return compile(load_experiment_text(zoo_experiment(model, "tiny", prompt, decode), model + ".yaml", overrides));
}

void require_match(const FunctionalReport& report, uint64_t tokens) {
  INFO(functional::functional_summary(report));
  REQUIRE(report.tokens == tokens);
  REQUIRE(!report.first);
  REQUIRE(report.passed);
  REQUIRE(report.max_rel_error <= report.tolerance);
  REQUIRE(report.max_rel_error > 0);  // bf16 rounding leaves a trace: the comparison sees the numbers
  REQUIRE(report.argmax_agreement >= 0.75);
}

// The plan of a model with a 4-position sliding window, checked against the
// reference of the same model without one: they differ once the context passes 4.
// Decode only (the prefill plan would be rebuilt from the model, window and all).
FunctionalReport windowed_plan_against_full_reference(const std::vector<std::string>& settings) {
  std::vector<std::string> windowed_settings = settings, full_settings = settings;
  windowed_settings.insert(windowed_settings.end(), {"model.sliding_window=4", "workload.prefill=false"});
  full_settings.push_back("workload.prefill=false");
  mapping::Plan windowed = tiny_plan("tiny-dense", windowed_settings);
  mapping::Plan full = tiny_plan("tiny-dense", full_settings);
  full.regions.swap(windowed.regions);
  return check_functional(full);
}

void require_window_caught(const FunctionalReport& report) {
  INFO(functional::functional_summary(report));
  REQUIRE(!report.passed);
  REQUIRE(report.first);
  REQUIRE(report.first->step == "attention");
  REQUIRE(report.first->layer == 0);
  REQUIRE(report.first->position == 4);  // the first position whose window leaves one out
}

}  // namespace

TEST_CASE("functional: bf16 and fp16 rounding is to nearest, ties to even", "[functional]") {
  using functional::round_to;
  REQUIRE(round_to(Dtype::BF16, 1.0f + 1.0f / 256) == 1.0f);               // a tie: to even
  REQUIRE(round_to(Dtype::BF16, 1.0f + 3.0f / 256) == 1.0f + 4.0f / 256);  // a tie: to even (up)
  REQUIRE(round_to(Dtype::BF16, 1.0f + 1.0f / 256 + 1e-4f) == 1.0f + 2.0f / 256);
  REQUIRE(round_to(Dtype::FP16, 1.0f + 1.0f / 2048) == 1.0f);
  REQUIRE(round_to(Dtype::FP16, 1.0f + 3.0f / 2048) == 1.0f + 4.0f / 2048);
  REQUIRE(round_to(Dtype::FP16, 70000.0f) == INFINITY);
  REQUIRE(round_to(Dtype::FP32, 1.2345678f) == 1.2345678f);
}

TEST_CASE("functional: weights depend on the seed and the parameter, not on the mapping", "[functional]") {
  const Experiment experiment = load_experiment_text(zoo_experiment("tiny-dense", "tiny"), "w.yaml");
  const functional::ModelWeights a(experiment.model, 1), b(experiment.model, 1), c(experiment.model, 2);
  REQUIRE(a.matrix(functional::Tensor::Q, 1, 7, 9) == b.matrix(functional::Tensor::Q, 1, 7, 9));
  REQUIRE(a.matrix(functional::Tensor::Q, 1, 7, 9) != c.matrix(functional::Tensor::Q, 1, 7, 9));
  REQUIRE(a.matrix(functional::Tensor::Q, 1, 7, 9) != a.matrix(functional::Tensor::Q, 0, 7, 9));
  REQUIRE(a.matrix(functional::Tensor::Q, 1, 7, 9) != a.matrix(functional::Tensor::K, 1, 7, 9));
}

TEST_CASE("functional: dense GQA, distributed dataflow, matches the reference", "[functional]") {
  require_match(check_functional(tiny_plan("tiny-dense", {"mapping.dataflow=distributed"})), 9);
}

TEST_CASE("functional: dense GQA, root dataflow, matches the reference", "[functional]") {
  require_match(check_functional(tiny_plan("tiny-dense", {"mapping.dataflow=root"})), 9);
}

TEST_CASE("functional: every reduction variant and multicast axis matches", "[functional]") {
  const std::vector<std::vector<std::string>> reductions = {
      {"mapping.reduction=tree", "mapping.reduce_fanin=2"},  {"mapping.reduction=tree", "mapping.reduce_fanin=3"},
      {"mapping.reduction=tree", "mapping.reduce_fanin=5"},  {"mapping.reduction=ktree", "mapping.ktree_levels=1"},
      {"mapping.reduction=ktree", "mapping.ktree_levels=2"}, {"mapping.reduction=ktree", "mapping.ktree_levels=3"}};
  for (const char* dataflow : {"root", "distributed"})
    for (const std::vector<std::string>& reduction : reductions)
      for (const char* axis : {"x", "y"})
        for (const char* root : {"first", "middle"}) {
          INFO(dataflow << " " << reduction[1] << " axis " << axis << " line root " << root);
          std::vector<std::string> settings = reduction;
          settings.push_back(std::string("mapping.dataflow=") + dataflow);
          settings.push_back(std::string("mapping.multicast_axis=") + axis);
          settings.push_back(std::string("mapping.line_root=") + root);
          require_match(check_functional(tiny_plan("tiny-dense", settings, 3, 2)), 5);
        }
}

// Partial sums rounded to 16 bits at every tile of their line: still within
// the tolerance, which widens with the format and the plan's longest line;
// and further from the reference than fp32 partial sums.
TEST_CASE("functional: fp16 and bf16 partial sums match within their wider tolerance", "[functional]") {
  for (const char* dataflow : {"root", "distributed"}) {
    const std::string flow = std::string("mapping.dataflow=") + dataflow;
    const FunctionalReport fp32 = check_functional(tiny_plan("tiny-dense", {flow}));
    for (const char* partial : {"fp16", "bf16"}) {
      INFO(dataflow << " " << partial);
      const FunctionalReport narrow =
          check_functional(tiny_plan("tiny-dense", {flow, std::string("mapping.partial_sum_dtype=") + partial}));
      require_match(narrow, 9);
      REQUIRE(narrow.tolerance >= fp32.tolerance);
      if (std::string(partial) == "bf16") REQUIRE(narrow.tolerance > fp32.tolerance);
      REQUIRE(narrow.max_rel_error != fp32.max_rel_error);  // the narrower sums are really rounded
    }
  }
}

// The slices hand-off: the next region's root-column tiles take the previous
// one's slices straight (re-cut where their slices differ: along x a root
// column is a region's height), on one wafer and across two.
TEST_CASE("functional: both hand-offs between regions match", "[functional]") {
  for (const char* handoff : {"root", "slices"})
    for (const char* axis : {"x", "y"})
      for (const char* wafers : {"1", "2"}) {
        INFO("handoff " << handoff << ", axis " << axis << ", wafers " << wafers);
        const mapping::Plan plan =
            tiny_plan("tiny-dense",
                      {"mapping.dataflow=distributed", std::string("mapping.handoff=") + handoff,
                       std::string("mapping.multicast_axis=") + axis, std::string("hardware.wafers=") + wafers},
                      3, 2);
        REQUIRE(plan.regions[1].slices_in == (std::string(handoff) == "slices"));
        require_match(check_functional(plan), 5);
      }
}

TEST_CASE("functional: a dropped partial sum is caught and named", "[functional]") {
  for (const char* dataflow : {"root", "distributed"}) {
    INFO(dataflow);
    const mapping::Plan plan = tiny_plan("tiny-dense", {std::string("mapping.dataflow=") + dataflow});
    const FunctionalReport report = check_functional(plan, {{"layer 1", "o_proj", 0, 1, ""}});
    INFO(functional::functional_summary(report));
    REQUIRE(!report.passed);
    REQUIRE(report.first);
    REQUIRE(report.first->region == "layer 1");
    REQUIRE(report.first->layer == 1);
    REQUIRE(report.first->step == "o_proj");
    REQUIRE(report.first->position == 0);
  }
}

TEST_CASE("functional: layernorm, GELU, learned positions, biases, tied embeddings and windows match", "[functional]") {
  const std::vector<std::vector<std::string>> variants = {
      {"model.norm=layernorm", "model.mlp=plain", "model.positions=learned"},
      {"model.sliding_window=4", "model.sliding_window_every=2"},  // layer 0 windowed, layer 1 full
      {"model.sliding_window=4"},                                  // every layer windowed
      {"model.qkv_bias=true", "model.o_bias=true", "model.mlp_bias=true", "model.tied_embeddings=true"},
      {"model.mlp=geglu"},
      {"model.parallel_residual=true"},
      {"model.rotary_dim=24"},
      {"model.lm_head_bias=true"},
      // Phi-2's layer: LayerNorm, a plain GELU MLP beside attention, biases, partial rotary, biased LM head.
      {"model.norm=layernorm", "model.mlp=plain", "model.parallel_residual=true", "model.rotary_dim=24",
       "model.qkv_bias=true", "model.o_bias=true", "model.mlp_bias=true", "model.lm_head_bias=true"},
  };
  for (const char* dataflow : {"root", "distributed"})
    for (std::vector<std::string> variant : variants) {
      variant.push_back(std::string("mapping.dataflow=") + dataflow);
      INFO(dataflow << " " << variant.front());
      require_match(check_functional(tiny_plan("tiny-dense", variant)), 9);
    }
}

TEST_CASE("functional: an MoE layer with a parallel residual routes the input norm and matches", "[functional]") {
  for (const char* dataflow : {"root", "distributed"}) {
    INFO(dataflow);
    require_match(check_functional(tiny_plan(
                      "tiny-moe", {"model.parallel_residual=true", std::string("mapping.dataflow=") + dataflow})),
                  9);
  }
}

TEST_CASE("functional: the reference gates with the model's activation, GELU for geglu and SiLU for swiglu",
          "[functional]") {
  // The tanh approximation of GELU, and SiLU, written out here.
  auto gelu = [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); };
  auto silu = [](double x) { return x / (1 + std::exp(-x)); };
  std::map<std::string, functional::ReferenceToken> outputs;
  for (const std::string mlp : {"swiglu", "geglu"}) {
    INFO(mlp);
    const Experiment experiment =
        load_experiment_text(zoo_experiment("tiny-dense", "tiny"), "w.yaml", {"model.mlp=" + mlp});
    const functional::ModelWeights weights(experiment.model, 1);
    functional::Reference reference(weights, 1);
    outputs[mlp] = reference.step(0, 5, 0);
    const std::vector<double>& gate_up = outputs[mlp].layers[0].at("gate_up");
    const std::vector<double>& act = outputs[mlp].layers[0].at("act");
    REQUIRE(act.size() == experiment.model.ffn_dim);
    for (size_t e = 0; e < act.size(); ++e) {
      const double gate = gate_up[2 * e], up = gate_up[2 * e + 1];
      REQUIRE(act[e] == Approx((mlp == "geglu" ? gelu(gate) : silu(gate)) * up).margin(1e-12));
    }
  }
  // The same weights: the gate and up sums agree, what the activation makes of them does not.
  CHECK(outputs["swiglu"].layers[0].at("gate_up") == outputs["geglu"].layers[0].at("gate_up"));
  CHECK(outputs["swiglu"].layers[0].at("act") != outputs["geglu"].layers[0].at("act"));
  CHECK(outputs["swiglu"].outer.at("logits") != outputs["geglu"].outer.at("logits"));
}

TEST_CASE("functional: a window that reads the wrong positions is caught", "[functional]") {
  require_window_caught(windowed_plan_against_full_reference({}));
}

// mapping.attention: grid, WaferLLM's attention layout: each column holds a run
// of a group's head dimensions and each row every rows-th position; scores sum
// along the rows, the softmax and the output combine down the columns.
const std::string kGridAttention = "mapping.attention=grid";
TEST_CASE("functional: grid attention matches the reference", "[functional][grid]") {
  require_match(check_functional(tiny_plan("tiny-dense", {kGridAttention})), 9);
  // Three KV groups of uneven widths, batch 2.
  require_match(check_functional(tiny_plan("tiny-dense", {kGridAttention, "model.n_heads=6", "model.head_dim=32",
                                                          "model.n_kv_heads=3", "workload.batch=2"})),
                18);
  require_match(check_functional(tiny_plan("tiny-dense", {kGridAttention, "model.attention_sinks=true",
                                                          "model.sliding_window=4", "mapping.partial_sum_dtype=fp16"})),
                9);
  // One head narrower than its group: 2 rotary pairs over 8 columns, 6 of them without dimensions.
  require_match(check_functional(tiny_plan(
                    "tiny-dense", {kGridAttention, "model.n_heads=1", "model.n_kv_heads=1", "model.head_dim=4"})),
                9);
  // One head over the whole block, as WaferLLM's kernel runs it, on two wafers.
  require_match(check_functional(tiny_plan("tiny-dense", {kGridAttention, "model.n_heads=1", "model.n_kv_heads=1",
                                                          "model.head_dim=256", "hardware.wafers=2"})),
                9);
}

TEST_CASE("functional: grid attention that reads the wrong positions or loses a partial is caught",
          "[functional][grid]") {
  require_window_caught(windowed_plan_against_full_reference({kGridAttention}));

  const mapping::Plan plan = tiny_plan("tiny-dense", {kGridAttention});
  const mapping::BlockGeometry& g = plan.regions[1].blocks[0].geo;
  // Row 1's score sum along group 0 loses column 1's scores; column 0's output loses row 1's share.
  for (const uint32_t line : {g.cols + 1, 0u}) {
    INFO("line " << line << " of " << g.rows << " x " << g.cols << " tiles");
    const FunctionalReport lost = check_functional(plan, {{"layer 0", "attention", line, 1, ""}});
    INFO(functional::functional_summary(lost));
    REQUIRE(!lost.passed);
    REQUIRE(lost.first);
    CHECK(lost.first->step == "attention");
    CHECK(lost.first->layer == 0);
  }
}

TEST_CASE("functional: MXFP4 weights share a power-of-two scale per block of 32 and take e2m1 values", "[functional]") {
  const Experiment experiment =
      load_experiment_text(zoo_experiment("tiny-moe", "tiny"), "w.yaml", {"model.moe_weight_dtype=mxfp4"});
  const functional::ModelWeights w(experiment.model, 1);
  std::vector<float> block;
  for (uint64_t c = 32; c < 64; ++c) block.push_back(w.matrix(functional::Tensor::ExpertUp, 0, 3, c, 5));
  float largest = 0;
  for (float v : block) largest = std::max(largest, std::fabs(v));
  // The largest element's level is 4 or 6 (its exponent sets the scale), so the scale is largest / 4 or / 6.
  const float scale = std::fabs(largest / 4 - std::ldexp(1.0f, int(std::floor(std::log2(largest / 4))))) == 0
                          ? largest / 4
                          : largest / 6;
  std::vector<float> levels_used;
  for (float v : block) {
    const float level = std::fabs(v) / scale;
    INFO(v << " at scale " << scale);
    REQUIRE((level == 0 || level == 0.5f || level == 1 || level == 1.5f || level == 2 || level == 3 || level == 4 ||
             level == 6));
    if (std::find(levels_used.begin(), levels_used.end(), level) == levels_used.end()) levels_used.push_back(level);
  }
  REQUIRE(levels_used.size() >= 4);
}

TEST_CASE("functional: batch > 1, two wafers, relays, fp16 and fp32 formats match", "[functional]") {
  // Six colours: some routing patterns go through relays (the golden dense-relays configuration).
  const mapping::Plan relayed = tiny_plan("tiny-dense", {"hardware.fabric.colors=6", "mapping.dataflow=root"});
  REQUIRE(relayed.relays > 0);
  require_match(check_functional(relayed), 9);
  for (const char* dataflow : {"root", "distributed"}) {
    const std::string flow = std::string("mapping.dataflow=") + dataflow;
    INFO(dataflow);
    require_match(check_functional(tiny_plan("tiny-dense", {flow, "workload.batch=3"})), 27);
    const mapping::Plan two = tiny_plan("tiny-dense", {flow, "hardware.wafers=2"});
    REQUIRE(two.hw.wafers == 2);
    require_match(check_functional(two), 9);
    require_match(check_functional(tiny_plan("tiny-dense", {flow, "model.weight_dtype=fp16", "model.kv_dtype=fp16",
                                                            "model.activation_dtype=fp16"})),
                  9);
    require_match(check_functional(tiny_plan("tiny-dense", {flow, "model.weight_dtype=fp32", "model.kv_dtype=fp32",
                                                            "model.activation_dtype=fp32"})),
                  9);
  }
}

namespace {
bool has_step(const mapping::Plan& plan, const std::string& label) {
  for (const mapping::Region& region : plan.regions)
    for (const auto& step : region.blocks[0].steps)
      if (label == step->label()) return true;
  return false;
}
}  // namespace

TEST_CASE("functional: q/k norm of heads split across tiles reduces their sums of squares and matches",
          "[functional]") {
  // Distributed on tiny-dense with the root row along x (its strips' width)
  // and one copy of each KV head: each column of a KV-head group holds whole
  // heads, so the per-head norm is local and the plan has no reduction for it.
  const mapping::Plan whole = tiny_plan("tiny-dense", {"model.qk_norm=true", "mapping.dataflow=distributed",
                                                       "mapping.multicast_axis=x", "mapping.kv_head_copies=1"});
  CHECK(!has_step(whole, "qk_norm_reduce"));
  require_match(check_functional(whole), 9);
  // Root: the root column's 12 slices cut heads; the sums of squares reduce
  // down the column and return before each tile scales its elements.
  const mapping::Plan cut_on_column = tiny_plan("tiny-dense", {"model.qk_norm=true", "mapping.dataflow=root"});
  CHECK(has_step(cut_on_column, "qk_norm_reduce"));
  require_match(check_functional(cut_on_column), 9);
  // Distributed with three columns per KV-head group: the group's four heads
  // (two queries, key, value) cut across its columns; the sums reduce along the root row.
  const mapping::Plan cut_on_row =
      tiny_plan("tiny-dense", {"model.qk_norm=true", "mapping.dataflow=distributed", "mapping.strips=1"});
  CHECK(has_step(cut_on_row, "qk_norm_reduce"));
  require_match(check_functional(cut_on_row), 9);
  // Two copies of each KV head: the first copy's group holds a query, the key
  // and the value, the second a query only, so heads cut unless the columns divide them.
  const mapping::Plan copies = tiny_plan("tiny-dense", {"model.qk_norm=true", "mapping.dataflow=distributed",
                                                        "mapping.multicast_axis=x", "mapping.kv_head_copies=2"});
  CHECK(has_step(copies, "qk_norm_reduce"));
  require_match(check_functional(copies), 9);
}

TEST_CASE("functional: what the evaluator does not cover is refused, not guessed", "[functional]") {
  REQUIRE_THROWS_AS(check_functional(tiny_plan("tiny-dense", {"model.weight_dtype=fp8"})), functional::FunctionalError);
  REQUIRE(functional::unsupported_reason(tiny_plan("tiny-dense", {"model.weight_dtype=fp8"})).find("fp8") !=
          std::string::npos);
  REQUIRE(functional::unsupported_reason(tiny_plan("tiny-dense", {})).empty());
}

TEST_CASE("functional: MoE top-k with shared experts matches, and a dropped expert partial sum is caught",
          "[functional]") {
  require_match(check_functional(tiny_plan("tiny-moe", {})), 9);
  require_match(check_functional(tiny_plan("tiny-moe", {"model.moe.n_shared_experts=1", "mapping.reduce_fanin=3"})), 9);
  require_match(check_functional(tiny_plan("tiny-moe", {"model.moe_weight_dtype=mxfp4", "workload.batch=2"})), 18);
  // The router's logits of row 0 lose column 1's partial sum.
  const FunctionalReport router = check_functional(tiny_plan("tiny-moe", {}), {{"layer 0", "router", 0, 1, ""}});
  INFO(functional::functional_summary(router));
  REQUIRE(router.first);
  REQUIRE(router.first->step == "router");
  REQUIRE(router.first->layer == 0);
  // Every expert's gate/up sums of row 0 lose column 1's partial: the combined expert output diverges.
  const FunctionalReport experts = check_functional(tiny_plan("tiny-moe", {}), {{"layer 1", "gate_up_proj", 0, 1, ""}});
  INFO(functional::functional_summary(experts));
  REQUIRE(experts.first);
  REQUIRE(experts.first->step == "experts");
  REQUIRE(experts.first->layer == 1);
}

TEST_CASE("functional: MoE results combined either way match, and a lost or misdirected expert stream is caught",
          "[functional]") {
  require_match(check_functional(tiny_plan("tiny-moe", {"mapping.moe_combine=root"})), 9);
  require_match(check_functional(tiny_plan(
                    "tiny-moe", {"mapping.dataflow=root", "mapping.moe_combine=tree", "model.moe.n_shared_experts=1"})),
                9);
  require_match(check_functional(tiny_plan("tiny-moe", {"mapping.moe_combine=tree"})), 9);
  require_match(
      check_functional(tiny_plan("tiny-moe", {"mapping.moe_combine=columns", "model.moe.n_shared_experts=1"})), 9);
  // Tree: the stream of expert 0's block (the whole sum), then of expert 1's
  // (the rest of its row), never arrives. Columns: the stream of expert 0's
  // block (the top of the first chain), then of expert 1's (below it).
  for (const char* combine : {"mapping.moe_combine=tree", "mapping.moe_combine=columns"})
    for (const uint32_t expert : {0u, 1u}) {
      const FunctionalReport lost =
          check_functional(tiny_plan("tiny-moe", {combine}), {{"layer 1", "experts", 0, expert, ""}});
      INFO(combine << ", expert " << expert << ": " << functional::functional_summary(lost));
      REQUIRE(lost.first);
      REQUIRE(lost.first->step == "experts");
      REQUIRE(lost.first->layer == 1);
    }
  // Expert 1's block streams one tile off its parent: at its root (tree:
  // expert 0 heads its row; columns: expert 0 is above it in the first chain).
  for (const bool columns : {false, true}) {
    mapping::Plan plan = tiny_plan("tiny-moe", {columns ? "mapping.moe_combine=columns" : "mapping.moe_combine=tree"});
    REQUIRE(functional::program_tree_mismatch(plan).empty());
    const mapping::Region& layer = plan.regions[2];
    REQUIRE(layer.name == "layer 1");
    const mapping::BlockGeometry& g = layer.blocks[2].geo;
    ProgramSet& set = plan.programs;
    const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(0, 0)) * set.grid_width + g.x(0, 0);
    bool corrupted = false;
    for (Task& task : set.programs[set.tile_program[tile]].tasks)
      if (task.op == TaskOp::Send && task.stream && task.category == Category::Reduce) {
        task.dx += 1;
        corrupted = true;
      }
    REQUIRE(corrupted);
    const std::string mismatch = functional::program_tree_mismatch(plan);
    INFO(mismatch);
    REQUIRE(mismatch.find(columns
                              ? "layer 1, expert block 2, root-row column 0: the program's combining send differs"
                              : "layer 1, expert block 2: the program's combining send differs") != std::string::npos);
  }
}

// One MoE layer shaped as gpt-oss-120b's (attention sinks, biases on the
// attention, experts and router, a sliding window, MXFP4 experts) on slices.
TEST_CASE("functional: a gpt-oss-shaped MoE layer on slices matches, and a routed expert's lost result is caught",
          "[functional][moe]") {
  const std::vector<std::string> gpt_oss = {
      "model.n_layers=1",       "model.attention_sinks=true",   "model.qkv_bias=true",
      "model.o_bias=true",      "model.mlp_bias=true",          "model.moe.router_bias=true",
      "model.sliding_window=4", "model.moe_weight_dtype=mxfp4", "mapping.dataflow=distributed"};
  const mapping::Plan plan = tiny_plan("tiny-moe", gpt_oss);
  REQUIRE(plan.regions[1].slices_in);
  REQUIRE(plan.regions[1].slices_out);
  require_match(check_functional(plan), 9);
  // Expert 0's block (the head of the combining tree) never sends its stream: every routed result is lost.
  const FunctionalReport lost = check_functional(plan, {{"layer 0", "experts", 0, 0, ""}});
  INFO(functional::functional_summary(lost));
  REQUIRE(lost.first);
  REQUIRE(lost.first->step == "experts");
  REQUIRE(lost.first->layer == 0);
}

TEST_CASE("functional: a program whose reduction goes elsewhere than the evaluator's tree is caught", "[functional]") {
  mapping::Plan plan = tiny_plan("tiny-dense", {"mapping.dataflow=root"});
  REQUIRE(functional::program_tree_mismatch(plan).empty());
  // Tile (0, 1) of layer 1's o_proj sends its partial sums to (0, 0); the engine's program is made to send them
  // one tile further along.
  const mapping::Region& layer = plan.regions[2];
  REQUIRE(layer.name == "layer 1");
  const mapping::Step* o_proj = nullptr;
  for (const auto& step : layer.blocks[0].steps)
    if (std::string(step->label()) == "o_proj") o_proj = step.get();
  REQUIRE(o_proj);
  const mapping::BlockGeometry& g = layer.blocks[0].geo;
  ProgramSet& set = plan.programs;
  const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(0, 1)) * set.grid_width + g.x(0, 1);
  bool corrupted = false;
  for (Task& task : set.programs[set.tile_program[tile]].tasks)
    if (task.op == TaskOp::Send && task.category == Category::Reduce && task.tag >= o_proj->env().tag &&
        task.tag < o_proj->env().tag + o_proj->tags_used()) {
      task.dx += g.dx(0, -1);
      task.dy += g.dy(0, -1);
      corrupted = true;
    }
  REQUIRE(corrupted);
  const std::string mismatch = functional::program_tree_mismatch(plan);
  INFO(mismatch);
  REQUIRE(mismatch.find("layer 1, step o_proj, tile (wafer 0,") != std::string::npos);
  const FunctionalReport report = check_functional(plan);
  REQUIRE(!report.passed);
  REQUIRE(report.first);
  REQUIRE(report.first->what == mismatch);
}

TEST_CASE("functional: uneven KV-head groups, MQA, MHA and other region shapes match", "[functional]") {
  const std::vector<std::vector<std::string>> variants = {
      {"model.n_heads=6", "model.n_kv_heads=3"},  // three groups over the columns: unequal widths
      {"model.n_heads=4", "model.n_kv_heads=1"},  // one group holds every column
      {"model.n_heads=8", "model.n_kv_heads=8", "model.head_dim=32"},
      {"mapping.strips=3"},
      {"mapping.use_all_tiles=false"},
  };
  for (const char* dataflow : {"root", "distributed"})
    for (std::vector<std::string> variant : variants) {
      variant.push_back(std::string("mapping.dataflow=") + dataflow);
      INFO(dataflow << " " << variant.front());
      require_match(check_functional(tiny_plan("tiny-dense", variant, 4, 2)), 6);
    }
}
