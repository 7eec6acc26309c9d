// sim.functional with the prefill on: the prompt passes the prefill plan
// chunk by chunk (both projection algorithms), decode then reads the KV cache
// the chunks wrote, and every token must match the Eigen forward pass; a
// partial sum lost inside the prefill plan is caught and named as the
// prefill's. Also attention sinks, which both phases evaluate.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/grid_attention.h"
#include "mapping/mesh_gemm.h"
#include "sim/functional/check.h"
#include "sim/functional/program_check.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;
using functional::check_functional;
using functional::FunctionalReport;

namespace {

// A tiny model on the tiny wafer with the prefill on, in chunks of at most `chunk` tokens.
mapping::Plan prefill_plan(const std::string& model, std::vector<std::string> overrides, uint64_t prompt,
                           uint64_t chunk, uint64_t decode = 2) {
  // Before the caller's settings, which may turn the prefill off again.
  overrides.insert(overrides.begin(),
                   {"workload.prefill=true", "workload.prefill_chunk_tokens=" + std::to_string(chunk)});
  return compile(load_experiment_text(zoo_experiment(model, "tiny", prompt, decode), model + ".yaml", overrides));
}

void require_match(const FunctionalReport& report, uint64_t tokens) {
  INFO(functional::functional_summary(report));
  REQUIRE(report.prefill_checked);
  REQUIRE(report.tokens == tokens);
  REQUIRE(!report.first);
  REQUIRE(report.passed);
  REQUIRE(report.max_rel_error > 0);  // rounding leaves a trace: the comparison sees the numbers
  REQUIRE(report.argmax_agreement >= 0.75);
}

// The prefill plan's step `label` of region `region`.
const mapping::Step* find_step(const mapping::Plan& plan, const std::string& region, const std::string& label) {
  for (const mapping::Region& r : plan.regions)
    if (r.name == region)
      for (const auto& step : r.blocks[0].steps)
        if (label == step->label()) return step.get();
  return nullptr;
}

}  // namespace

TEST_CASE("functional prefill: chunks that do and do not divide the prompt, both GEMMs and dataflows, match",
          "[functional]") {
  struct Case {
    const char* dataflow;
    const char* gemm;
  };
  for (const Case c :
       {Case{"root", "chunked_gemv"}, Case{"distributed", "chunked_gemv"}, Case{"distributed", "meshgemm"}}) {
    const std::vector<std::string> settings = {std::string("mapping.dataflow=") + c.dataflow,
                                               std::string("mapping.prefill_gemm=") + c.gemm};
    // 6 tokens in chunks of 3; 7 tokens in chunks of 3, 3 and 1 (the last one short).
    for (const uint64_t prompt : {6, 7}) {
      INFO(c.dataflow << " " << c.gemm << " prompt " << prompt);
      require_match(check_functional(prefill_plan("tiny-dense", settings, prompt, 3)), prompt + 2);
    }
  }
}

TEST_CASE("functional prefill: grid attention stores each chunk where decode reads it, and matches",
          "[functional][grid]") {
  for (const std::string gemm : {"chunked_gemv", "meshgemm"})
    for (uint64_t chunk : {4, 5}) {
      INFO(gemm << ", chunks of " << chunk);
      require_match(check_functional(prefill_plan(
                        "tiny-dense", {"mapping.attention=grid", "mapping.prefill_gemm=" + gemm}, 12, chunk)),
                    14);
    }
}

TEST_CASE("functional prefill: a grid prefill under decode's groups re-cuts the slices, moves the KV, and matches",
          "[functional][grid]") {
  struct Case {
    std::vector<std::string> settings;
    uint64_t prompt, chunk, tokens;
  };
  const std::vector<Case> cases = {
      {{"mapping.prefill_gemm=chunked_gemv"}, 12, 5, 14},
      {{"mapping.prefill_gemm=meshgemm"}, 12, 4, 14},
      {{"mapping.kv_head_copies=1"}, 9, 4, 11},
      {{"model.sliding_window=4", "model.sliding_window_every=2"}, 9, 4, 11},
      {{"hardware.wafers=2"}, 7, 3, 9},
      {{"workload.batch=2"}, 5, 3, 14},
  };
  for (const Case& c : cases) {
    std::vector<std::string> settings = c.settings;
    settings.push_back("mapping.prefill_attention=grid");
    INFO(settings.front());
    const mapping::Plan plan = prefill_plan("tiny-dense", settings, c.prompt, c.chunk);
    REQUIRE(plan.options.attention == mapping::AttentionLayout::Groups);
    const mapping::Plan prefill = mapping::compile_prefill_plan(plan);
    REQUIRE(find_step(prefill, "layer 0", "qkv_to_grid"));
    REQUIRE(find_step(prefill, "layer 0", "attention_to_groups"));
    const auto* grid = dynamic_cast<const mapping::GridAttentionStep*>(find_step(prefill, "layer 0", "attention"));
    REQUIRE(grid);
    REQUIRE(grid->kv_move());
    REQUIRE(functional::program_tree_mismatch(prefill).empty());
    require_match(check_functional(plan, {}, &prefill), c.tokens);
  }
  require_match(check_functional(prefill_plan("tiny-moe", {"mapping.prefill_attention=grid"}, 5, 3)), 7);
}

TEST_CASE("functional prefill: a grid prefill without its KV move leaves decode without the prompt's entries",
          "[functional][grid]") {
  // With one column per KV head the grid's order is decode's groups' (each
  // column holds all of its head's q/k/v), so a decode laid out as the grid
  // compiles the same prefill without the KV move, on the same weights.
  const std::vector<std::string> one_column_per_kv_head = {"mapping.layer_grid.columns=16", "mapping.layer_grid.rows=2",
                                                           "mapping.prefill_attention=grid"};
  const mapping::Plan decode = prefill_plan("tiny-dense", one_column_per_kv_head, 6, 3);
  std::vector<std::string> grid_settings = one_column_per_kv_head;
  grid_settings.push_back("mapping.attention=grid");
  const mapping::Plan unmoved = mapping::compile_prefill_plan(prefill_plan("tiny-dense", grid_settings, 6, 3));
  const auto* grid = dynamic_cast<const mapping::GridAttentionStep*>(find_step(unmoved, "layer 0", "attention"));
  REQUIRE(grid);
  REQUIRE(grid->groups().widest == 1);
  REQUIRE(!grid->kv_move());
  require_match(check_functional(decode), 8);
  const FunctionalReport report = check_functional(decode, {}, &unmoved);
  INFO(functional::functional_summary(report));
  REQUIRE(!report.passed);
  REQUIRE(report.first);
  REQUIRE(report.first->plan == "decode");
  REQUIRE(report.first->position == 6);
  // Decode's own entry only: the prompt's six stayed in the grid's layout.
  REQUIRE(report.first->what.find("hold 1 KV entries of KV head 0 for positions 0..6") != std::string::npos);
}

TEST_CASE("functional prefill: MeshGEMM token blocks of several tokens on every ring position match", "[functional]") {
  // One chunk of 30 tokens: the rings of the tiny layer's lines take blocks of
  // several tokens each, each finishing at its own ring position.
  const mapping::Plan plan =
      prefill_plan("tiny-dense", {"mapping.dataflow=distributed", "mapping.prefill_gemm=meshgemm"}, 30, 30, 1);
  const mapping::Plan prefill = mapping::compile_prefill_plan(plan);
  const mapping::Step* qkv = find_step(prefill, "layer 0", "qkv_proj");
  REQUIRE(qkv);
  const auto* mesh = dynamic_cast<const mapping::MeshGemmStep*>(qkv);
  REQUIRE(mesh);
  REQUIRE(mesh->ring_block_tokens() > 1);
  require_match(check_functional(plan, {}, &prefill), 31);
}

TEST_CASE("functional prefill: MeshGEMM under every reduction variant, both multicast axes and relays matches",
          "[functional]") {
  const std::vector<std::vector<std::string>> variants = {
      {"mapping.reduction=tree", "mapping.reduce_fanin=3", "mapping.multicast_axis=y"},
      {"mapping.reduction=ktree", "mapping.ktree_levels=2", "mapping.multicast_axis=x"},
      {"mapping.reduction=ktree", "mapping.ktree_levels=3", "mapping.multicast_axis=y"},
      {"hardware.fabric.colors=6"},  // some routing patterns go through relays
  };
  for (std::vector<std::string> variant : variants) {
    INFO(variant.front());
    variant.push_back("mapping.dataflow=distributed");
    variant.push_back("mapping.prefill_gemm=meshgemm");
    const mapping::Plan plan = prefill_plan("tiny-dense", variant, 7, 4);
    if (variant.front() == "hardware.fabric.colors=6") {
      uint32_t relayed = 0;
      for (const mapping::Region& region : mapping::compile_prefill_plan(plan).regions)
        for (const auto& step : region.blocks[0].steps) relayed += step->relayed_patterns();
      REQUIRE(relayed > 0);
    }
    require_match(check_functional(plan), 9);
  }
}

TEST_CASE("functional prefill: batch > 1, two wafers, MoE with shared experts, windows, layernorm/GELU match",
          "[functional]") {
  for (const char* gemm : {"chunked_gemv", "meshgemm"}) {
    INFO(gemm);
    const std::string mesh = std::string("mapping.prefill_gemm=") + gemm;
    require_match(check_functional(prefill_plan("tiny-dense", {mesh, "workload.batch=3"}, 5, 2)), 3 * 7);
    const mapping::Plan two = prefill_plan("tiny-dense", {mesh, "hardware.wafers=2"}, 5, 4);
    REQUIRE(two.hw.wafers == 2);
    require_match(check_functional(two), 7);
    require_match(check_functional(prefill_plan(
                      "tiny-dense", {mesh, "model.sliding_window=4", "model.sliding_window_every=2"}, 9, 4)),
                  11);
    require_match(
        check_functional(prefill_plan(
            "tiny-dense", {mesh, "model.norm=layernorm", "model.mlp=plain", "model.positions=learned"}, 5, 3)),
        7);
  }
  for (const char* dataflow : {"root", "distributed"}) {
    INFO(dataflow);
    require_match(
        check_functional(prefill_plan(
            "tiny-moe",
            {std::string("mapping.dataflow=") + dataflow, "model.moe.n_shared_experts=1", "workload.batch=2"}, 5, 3)),
        2 * 7);
  }
}

TEST_CASE("functional prefill: a partial sum lost inside the prefill plan is caught and named", "[functional]") {
  for (const char* gemm : {"chunked_gemv", "meshgemm"}) {
    INFO(gemm);
    const mapping::Plan plan =
        prefill_plan("tiny-dense", {"mapping.dataflow=distributed", std::string("mapping.prefill_gemm=") + gemm}, 6, 3);
    const FunctionalReport report = check_functional(plan, {{"layer 1", "o_proj", 0, 1, "prefill"}});
    INFO(functional::functional_summary(report));
    REQUIRE(!report.passed);
    REQUIRE(report.first);
    REQUIRE(report.first->plan == "prefill");
    REQUIRE(report.first->region == "layer 1");
    REQUIRE(report.first->step == "o_proj");
    REQUIRE(report.first->position == 0);
  }
  // The same loss in the decode plan only: the prompt matches, the first decoded position does not.
  const mapping::Plan plan = prefill_plan("tiny-dense", {"mapping.dataflow=distributed"}, 6, 3);
  const FunctionalReport report = check_functional(plan, {{"layer 1", "o_proj", 0, 1, "decode"}});
  INFO(functional::functional_summary(report));
  REQUIRE(report.first);
  REQUIRE(report.first->plan == "decode");
  REQUIRE(report.first->position == 6);
}

TEST_CASE("functional prefill: a MeshGEMM ring send that skips its successor is caught", "[functional]") {
  const mapping::Plan plan =
      prefill_plan("tiny-dense", {"mapping.dataflow=distributed", "mapping.prefill_gemm=meshgemm"}, 6, 3);
  mapping::Plan prefill = mapping::compile_prefill_plan(plan);
  REQUIRE(functional::program_tree_mismatch(prefill).empty());
  const mapping::Step* down = find_step(prefill, "layer 0", "down_proj");
  REQUIRE(down);
  const mapping::BlockGeometry& g = down->env().geo;
  REQUIRE(g.cols > 2);
  // Tile (0, 0)'s partials go to its ring successor two columns on; make them go three.
  ProgramSet& set = prefill.programs;
  const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(0, 0)) * set.grid_width + g.x(0, 0);
  bool corrupted = false;
  for (Task& task : set.programs[set.tile_program[tile]].tasks)
    if (task.op == TaskOp::Send && task.category != Category::Reduce && task.tag >= down->env().tag &&
        task.tag < down->env().tag + down->tags_used() && g.dx(0, 2) == task.dx && g.dy(0, 2) == task.dy) {
      task.dx += g.dx(0, 1);
      task.dy += g.dy(0, 1);
      corrupted = true;
    }
  REQUIRE(corrupted);
  const std::string mismatch = functional::program_tree_mismatch(prefill);
  INFO(mismatch);
  REQUIRE(mismatch.find("layer 0, step down_proj") != std::string::npos);
  REQUIRE(mismatch.find("ring") != std::string::npos);
  const FunctionalReport report = check_functional(plan, {}, &prefill);
  REQUIRE(!report.passed);
  REQUIRE(report.first);
  REQUIRE(report.first->plan == "prefill");
  REQUIRE(report.first->what == mismatch);
}

// The tasks of tile (i, j) of `step` in `plan`'s programs, within the step's tags.
template <typename F>
bool corrupt(mapping::Plan& plan, const mapping::Step& step, uint32_t i, uint32_t j, F change) {
  const mapping::BlockGeometry& g = step.env().geo;
  ProgramSet& set = plan.programs;
  const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(i, j)) * set.grid_width + g.x(i, j);
  bool changed = false;
  for (Task& task : set.programs[set.tile_program[tile]].tasks)
    if (task.tag >= step.env().tag && task.tag < step.env().tag + step.tags_used()) changed = change(task) || changed;
  return changed;
}

TEST_CASE("functional: attention trees and multicasts that differ from the evaluator's are caught", "[functional]") {
  for (const std::string flow : {"mapping.dataflow=root", "mapping.dataflow=distributed", "mapping.attention=grid"}) {
    INFO(flow);
    // Row 1 of column 0 sends its attention partials two rows up instead of one.
    mapping::Plan tree = prefill_plan("tiny-dense", {flow, "workload.prefill=false"}, 4, 4);
    REQUIRE(functional::program_tree_mismatch(tree).empty());
    const mapping::Step* attention = find_step(tree, "layer 1", "attention");
    REQUIRE(attention);
    const mapping::BlockGeometry& g = attention->env().geo;
    REQUIRE(corrupt(tree, *attention, 1, 0, [&](Task& task) {
      if (task.op != TaskOp::Send || task.category != Category::Reduce) return false;
      task.dx += g.dx(-1, 0);
      task.dy += g.dy(-1, 0);
      return true;
    }));
    const std::string wrong_tree = functional::program_tree_mismatch(tree);
    INFO(wrong_tree);
    REQUIRE(wrong_tree.find("layer 1, step attention") != std::string::npos);
    REQUIRE(wrong_tree.find("reduction send") != std::string::npos);
    // The root's multicast of q down the root column stops one tile short.
    mapping::Plan multicast = prefill_plan("tiny-dense", {flow, "workload.prefill=false"}, 4, 4);
    const mapping::Step* qkv = find_step(multicast, "layer 0", "attention");
    REQUIRE(qkv);
    const Dir down = qkv->env().geo.down();
    REQUIRE(corrupt(multicast, *qkv, 0, 0, [&](Task& task) {
      if (task.op != TaskOp::Multicast || task.dir != down) return false;
      --task.count;
      return true;
    }));
    const std::string short_multicast = functional::program_tree_mismatch(multicast);
    INFO(short_multicast);
    REQUIRE(short_multicast.find("layer 0, step attention") != std::string::npos);
    REQUIRE(short_multicast.find("multicasts") != std::string::npos);
  }
}

TEST_CASE(
    "functional: copies of the KV heads attend with their share of the queries and match, and a lost key "
    "and value multicast is caught",
    "[functional]") {
  for (const char* copies : {"1", "2"}) {
    INFO(copies);
    const std::string setting = std::string("mapping.kv_head_copies=") + copies;
    const mapping::Plan plan = prefill_plan("tiny-dense", {setting}, 6, 4);
    const mapping::Step* attention = find_step(plan, "layer 0", "attention");
    REQUIRE(attention);
    const auto* groups = dynamic_cast<const mapping::KvGroupAttention*>(attention);
    REQUIRE(groups);
    REQUIRE(groups->groups().copies == uint32_t(std::stoul(copies)));
    require_match(check_functional(plan), 8);
    // Batch 2 on two wafers: each copy keeps every position of both sequences.
    require_match(
        check_functional(prefill_plan("tiny-dense", {setting, "workload.batch=2", "hardware.wafers=2"}, 6, 4)), 16);
  }
  // The first copy's first column multicasts the key and value along both copies; drop it.
  mapping::Plan lost = prefill_plan("tiny-dense", {"mapping.kv_head_copies=2", "workload.prefill=false"}, 4, 4);
  const mapping::Step* attention = find_step(lost, "layer 1", "attention");
  REQUIRE(attention);
  const mapping::BlockGeometry& g = attention->env().geo;
  const auto& groups = dynamic_cast<const mapping::KvGroupAttention&>(*attention).groups();
  REQUIRE(corrupt(lost, *attention, 0, groups.start[0], [&](Task& task) {
    if (task.op != TaskOp::Multicast || task.dir != g.across() || task.count != groups.copy_columns(0) - 1)
      return false;
    task.count = 0;
    return true;
  }));
  const std::string mismatch = functional::program_tree_mismatch(lost);
  INFO(mismatch);
  REQUIRE(mismatch.find("layer 1, step attention") != std::string::npos);
  REQUIRE(mismatch.find("multicasts") != std::string::npos);
}

TEST_CASE("functional: attention sinks join the softmax in both plans and match", "[functional]") {
  for (const char* dataflow : {"root", "distributed"}) {
    INFO(dataflow);
    const std::string flow = std::string("mapping.dataflow=") + dataflow;
    require_match(check_functional(prefill_plan("tiny-dense", {flow, "model.attention_sinks=true"}, 6, 4)), 8);
  }
  // A plan whose attention has no sink work, for a model with sinks: the reference's softmax takes them, the plan's
  // does not, and attention diverges at once.
  mapping::Plan with = prefill_plan("tiny-dense", {"model.attention_sinks=true", "workload.prefill=false"}, 4, 4);
  mapping::Plan without = prefill_plan("tiny-dense", {"workload.prefill=false"}, 4, 4);
  with.regions.swap(without.regions);
  with.programs = without.programs;
  const FunctionalReport report = check_functional(with);
  INFO(functional::functional_summary(report));
  REQUIRE(!report.passed);
  REQUIRE(report.first);
  REQUIRE(report.first->step == "attention");
  REQUIRE(report.first->position == 0);
}

// mapping.line_root: middle: every line's trees root at its middle tile and its
// multicasts leave both ways; the numbers must not notice, and a partial lost on
// the side before the root must be caught as one after it is.
TEST_CASE("functional: middle roots match in prefill and decode, and a lost partial before the root is caught",
          "[functional][middle]") {
  const std::string middle = "mapping.line_root=middle";
  for (const char* axis : {"x", "y"}) {
    const std::string along = std::string("mapping.multicast_axis=") + axis;
    const std::vector<std::vector<std::string>> cases = {
        {"mapping.attention=grid"},
        {"model.n_heads=8", "model.head_dim=32", "model.n_kv_heads=2", "mapping.kv_head_copies=4", "hardware.wafers=2"},
        {"mapping.handoff=root", "mapping.prefill_gemm=meshgemm"},
        {"mapping.dataflow=root"}};
    for (std::vector<std::string> settings : cases) {
      INFO("axis " << axis << ", " << settings[0]);
      settings.insert(settings.end(), {middle, along});
      require_match(check_functional(prefill_plan("tiny-dense", settings, 7, 3)), 9);
    }
  }
  // Middle roots in decode only: the prefill, rooted first, writes the KV cache decode reads.
  require_match(check_functional(prefill_plan("tiny-dense", {"mapping.line_root=middle_in_decode"}, 7, 3)), 9);
  const mapping::Plan plan = prefill_plan("tiny-dense", {middle}, 6, 3);
  const mapping::BlockGeometry& g = plan.regions[1].blocks[0].geo;
  REQUIRE(g.root_i() > 0);
  REQUIRE(g.root_j() > 0);
  // Row 0's partial of o_proj: the first tile of its line, before the line's middle root.
  const FunctionalReport lost = check_functional(plan, {{"layer 1", "o_proj", 0, 0, "decode"}});
  INFO(functional::functional_summary(lost));
  REQUIRE(!lost.passed);
  REQUIRE(lost.first);
  CHECK(lost.first->step == "o_proj");
}
