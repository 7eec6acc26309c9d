// The compiled plan charges the work the decode graph (`describe model`)
// describes. For one token at a given context, the FLOPs that every tile's
// Compute tasks charge are summed step by step and compared with the graph ops
// each step stands for (its row of the lowering table, workloads/lowering.h),
// and every graph op must be some step's; the weights each region's steps
// hold for the token are compared with the bytes its ops read.
//
// The one stated margin is the largest-block rule: a step cut into parts
// charges every tile the largest part (the ceiling of the split), so a step
// may charge up to parts * ceil(n / parts) / n times the graph's work along
// each split dimension, and never less. Steps that split nothing must agree
// to the FLOP. Not compared: the Reduce tasks of trees (adding partial sums
// of a split; a single-tile op has none) and the messages.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/grid_attention.h"
#include "mapping/mesh_gemm.h"
#include "mapping/plan.h"
#include "sim/experiment/experiment.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/graph.h"
#include "workloads/lowering.h"
#include "workloads/model_file.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// How a step cuts its work across tiles, for the largest-block margin. A
// GEMV's cut follows its output (slices on the root column or row), as does a line's.
enum class Cut { None, GemvToColumn, GemvToRow, Column, KvHeads };

Cut cut_of(const mapping::Step& step) {
  const bool gemv = dynamic_cast<const mapping::GemvToColumnStep*>(&step) ||
                    dynamic_cast<const mapping::GemvToRowStep*>(&step) ||
                    dynamic_cast<const mapping::MeshGemmStep*>(&step);
  if (gemv) return step.output() == mapping::FrontKind::Row ? Cut::GemvToRow : Cut::GemvToColumn;
  if (dynamic_cast<const mapping::LineComputeStep*>(&step)) return Cut::Column;
  if (dynamic_cast<const mapping::KvGroupAttention*>(&step)) return Cut::KvHeads;
  return Cut::None;
}

// The lowering table of a region's block (mapping::build_region's choice).
workloads::LayerLowering lowering_of(const mapping::Plan& plan, const mapping::Region& region, size_t block) {
  return block == 0 ? mapping::main_block_lowering(region.kind, plan.options) : workloads::LayerLowering::Expert;
}

// The root's pick between the argmax candidates the reduce left it (the
// "pick" group of the head's lowering table): a fixed 16 FLOPs per token.
constexpr uint64_t kPickFlops = 16;

double padding(uint64_t elements, uint64_t parts) {
  if (elements == 0 || parts == 0) return 1.0;
  return double(parts * ((elements + parts - 1) / parts)) / double(elements);
}
// The same for the block's split of its rows or columns, which the compiler may
// have relieved (block.h): every tile is charged the largest share.
double row_padding(uint64_t elements, const mapping::BlockGeometry& geo) {
  if (elements == 0) return 1.0;
  return double(geo.rows * geo.largest_row_share(elements)) / double(elements);
}
double column_padding(uint64_t elements, const mapping::BlockGeometry& geo) {
  if (elements == 0) return 1.0;
  return double(geo.cols * geo.largest_column_share(elements)) / double(elements);
}

// Compute-category FLOPs a step charges, summed over the block's tiles, at `context`.
uint64_t step_flops(const mapping::Step& step, const mapping::BlockGeometry& geo, uint64_t context) {
  // Tiles whose row and column signatures match run the same tasks in the step.
  auto classes = [&](bool rows) {
    std::map<std::vector<uint64_t>, std::vector<uint32_t>> out;
    for (uint32_t index = 0; index < (rows ? geo.rows : geo.cols); ++index) {
      std::vector<uint64_t> signature{index == 0};
      step.signature(rows, index, signature);
      out[signature].push_back(index);
    }
    return out;
  };
  uint64_t flops = 0;
  for (const auto& [row_signature, rows] : classes(true))
    for (const auto& [column_signature, columns] : classes(false)) {
      std::vector<Task> tasks;
      step.emit(rows[0], columns[0], tasks);
      for (const Task& task : tasks) {
        if (task.op != TaskOp::Compute || task.category != Category::Compute) continue;
        flops += task.work.flops * rows.size() * columns.size();
        if (task.work_per_position.flops == 0) continue;
        const uint64_t attended = task.kv_window > 0 ? std::min<uint64_t>(context, task.kv_window) : context;
        for (uint32_t i : rows)
          for (uint32_t j : columns) {
            const uint32_t offset = task.kv_offset == Task::kTileParam ? step.kv_offset(i, j) : task.kv_offset;
            flops += task.work_per_position.flops * positions_held(attended, task.kv_stride, offset);
          }
      }
    }
  return flops;
}

struct Group {
  uint64_t graph_flops = 0, plan_flops = 0;
  double margin = 1.0;  // largest-block rule: the plan may charge up to graph * margin
};

// Checks one plan against the decode graph of one token of sequence 0 at `context`.
void check_plan(const mapping::Plan& plan, uint64_t context) {
  const workloads::ModelSpec& m = plan.model;
  const workloads::Graph graph = workloads::build_decode_graph(m, {1, context, plan.workload.seed});
  std::map<std::string, const workloads::GraphOp*> ops;
  for (const workloads::GraphOp& op : graph.ops) ops[op.name] = &op;
  std::set<std::string> lowered;  // the graph ops some step stands for

  for (const mapping::Region& region : plan.regions) {
    INFO(region.name);
    const std::string layer = region.layer >= 0 ? "layers." + std::to_string(region.layer) + "." : "";
    // The experts the graph's token uses in this layer, and which of them the blocks are.
    std::set<int32_t> routed;
    for (const workloads::GraphOp& op : graph.ops)
      if (op.layer == region.layer && op.expert >= 0) routed.insert(op.expert);

    std::map<std::string, Group> groups;
    uint64_t plan_weight_bytes = 0;
    for (size_t b = 0; b < region.blocks.size(); ++b) {
      const mapping::Block& block = region.blocks[b];
      std::string prefix;
      if (b > 0) {                                                       // expert blocks: routed first, then shared
        if (block.expert >= 0 && !routed.count(block.expert)) continue;  // not this token's expert
        prefix = block.expert >= 0 ? "experts." + std::to_string(block.expert) + "."
                                   : "shared_experts." + std::to_string(b - 1 - m.moe.n_experts) + ".";
      }
      for (const auto& step : block.steps) {
        INFO(step->label());
        const workloads::StepLowering* what = workloads::find_lowering(lowering_of(plan, region, b), step->label());
        REQUIRE(what);
        const Cut cut = cut_of(*step);
        const bool on_row = step->output() == mapping::FrontKind::Row;
        std::vector<const workloads::GraphOp*> step_ops;
        for (const std::string& name : what->ops) {
          const bool per_block = cut == Cut::GemvToColumn || cut == Cut::GemvToRow || name == "act";
          const auto op = ops.find(layer + (per_block ? prefix : "") + name);
          if (op != ops.end()) step_ops.push_back(op->second), lowered.insert(op->first);
        }
        const std::string group =
            layer + (what->group.empty() ? (what->ops.empty() ? "" : prefix + what->ops[0]) : what->group);
        Group& g = groups[group];
        for (const workloads::GraphOp* op : step_ops) g.graph_flops += op->flops;
        g.plan_flops += step_flops(*step, block.geo, context);
        plan_weight_bytes += step->total_weight_bytes();

        // The largest-block margin of the step's cut.
        const mapping::BlockGeometry& geo = block.geo;
        double margin = 1.0;
        if (cut == Cut::Column) {
          // A slice step without an op of its own (a norm's scaling, a routed
          // expert's weight) works on the residual stream's width.
          const uint64_t elements = step_ops.empty() ? m.d_model : step_ops[0]->input_shape.back();
          margin = on_row ? column_padding(elements, geo) : row_padding(elements, geo);
          // Rotary is charged the largest share of the elements it turns, which a
          // partial rotary (model.rotary_dim) cuts finer than the query and key slices.
          if (step->label() == std::string("rotary")) {
            const uint64_t rotated = workloads::rotated_elements(m);
            margin = std::max(margin, on_row ? column_padding(rotated, geo) : row_padding(rotated, geo));
          }
          // Latent attention cuts each part on its own line: the two latents
          // along the root row, the rope key along it and the query heads' rope
          // parts down the root column. A group is charged the mean of its
          // parts' paddings, weighted by their elements: at most the worst.
          const std::string label = step->label();
          if (label == "latent_norm_stats" || label == "latent_norm_scale")
            margin = std::max(column_padding(m.mla.q_lora_rank, geo), column_padding(m.mla.kv_lora_rank, geo));
          if (label == "rotary_key" || label == "rotary_query")
            margin = std::max(column_padding(m.mla.qk_rope_head_dim, geo),
                              row_padding(uint64_t(m.n_heads) * m.mla.qk_rope_head_dim, geo));
        } else if (!step_ops.empty()) {
          const workloads::GraphOp& first = *step_ops[0];
          uint64_t d_out = 0;
          for (const workloads::GraphOp* op : step_ops) d_out += op->output_shape.back();
          const uint64_t d_in = first.input_shape.back();
          // A GEMV storing fewer weights than its dense d_in x d_out (latent
          // attention's per-head blocks, W_O after W_UV) applies its ops one
          // after another, reading the first's input and writing the last's
          // output, and spreads its weights evenly: each tile's share is
          // rounded up to a whole element, at most one per tile beyond the
          // cut's padding.
          const uint64_t weights = step->total_weight_elements();
          const bool block_structured = (cut == Cut::GemvToColumn || cut == Cut::GemvToRow) && weights < d_in * d_out;
          if (block_structured) d_out = step_ops.back()->output_shape.back();
          const double rounding = block_structured ? 1.0 + double(geo.rows) * geo.cols / double(weights) : 1.0;
          switch (cut) {
            case Cut::None:
            case Cut::Column: break;
            case Cut::GemvToColumn: margin = row_padding(d_out, geo) * column_padding(d_in, geo) * rounding; break;
            case Cut::GemvToRow: margin = row_padding(d_in, geo) * column_padding(d_out, geo) * rounding; break;
            case Cut::KvHeads: margin = padding(m.cached_kv_heads(), std::min(m.cached_kv_heads(), geo.cols)); break;
          }
        }
        g.margin = std::max(g.margin, margin);
      }
      // mapping.moe_combine: tree. The expert adds its result into the passing sum (a streamed Send's work).
      for (const Task& task : block.root_combine)
        if (task.op == TaskOp::Send) groups[layer + "expert_combine"].plan_flops += task.work.flops;
      // columns: each root-row tile adds its slice into the passing sum (a
      // streamed Send's work) or, at a chain's top, into the sum it writes out
      // (the routed branch's Compute; the other branch adds nothing).
      for (size_t j = 0; j < block.row_combine.size(); ++j)
        for (const Task& task : block.row_combine[j])
          if (task.op == TaskOp::Send || task.op == TaskOp::Compute)
            groups[layer + "expert_combine"].plan_flops += task.work.flops;
    }

    for (const auto& [name, g] : groups) {
      INFO(name << ": graph " << g.graph_flops << " FLOPs, plan " << g.plan_flops << ", margin " << g.margin);
      if (name == layer + "pick") {
        CHECK(g.plan_flops == kPickFlops);
      } else if (g.margin == 1.0) {
        CHECK(g.plan_flops == g.graph_flops);
      } else {
        CHECK(g.plan_flops >= g.graph_flops);
        CHECK(double(g.plan_flops) <= double(g.graph_flops) * g.margin * (1 + 1e-12));
      }
    }

    // Weights: every matrix, norm vector and sink of a layer is read once per
    // token (routed experts: the token's own). The embedding region holds whole
    // tables but reads one row per token; compile_test checks its placement.
    if (region.kind != mapping::RegionKind::Embedding) {
      uint64_t graph_weight_bytes = 0;
      for (const workloads::GraphOp& op : graph.ops)
        if (op.layer == region.layer && op.kind != workloads::OpKind::Embedding &&
            op.kind != workloads::OpKind::PositionEmbedding)
          graph_weight_bytes += op.weight_bytes_read;
      CHECK(plan_weight_bytes == graph_weight_bytes);
    }
  }
  for (const workloads::GraphOp& op : graph.ops) {
    INFO(op.name << " is no step's, by the lowering table");
    CHECK(lowered.count(op.name) == 1);
  }
}

mapping::Plan plan_for(const std::string& model, const std::string& hardware,
                       const std::vector<std::string>& overrides = {}) {
  return compile(load_experiment_text(zoo_experiment(model, hardware), model + ".yaml", overrides));
}

}  // namespace

TEST_CASE("every zoo model's plan charges the FLOPs and weights of its decode graph", "[mapping][zoo][graph]") {
  for (const std::string& model : workloads::zoo_model_names()) {
    INFO(model);
    const bool tiny = model.rfind("tiny", 0) == 0;
    const mapping::Plan plan = plan_for(model, tiny ? "tiny" : "wse3");
    check_plan(plan, plan.workload.prompt_tokens + 1);  // the first decode step
  }
}

TEST_CASE("the plan follows the graph for every norm, MLP, position and bias variant", "[mapping][graph]") {
  const std::vector<std::vector<std::string>> variants = {
      {"model.norm=layernorm"},
      {"model.mlp=plain"},
      {"model.mlp=geglu"},
      {"model.parallel_residual=true"},
      {"model.rotary_dim=24"},
      {"model.lm_head_bias=true"},
      {"model.lm_head_bias=true", "model.tied_embeddings=true"},
      // Phi-2's layer: LayerNorm, plain GELU MLP beside attention, biases, partial rotary.
      {"model.norm=layernorm", "model.mlp=plain", "model.parallel_residual=true", "model.rotary_dim=24",
       "model.qkv_bias=true", "model.o_bias=true", "model.mlp_bias=true", "model.lm_head_bias=true"},
      {"model.positions=learned"},
      {"model.qk_norm=true"},
      {"model.positions=learned", "model.qk_norm=true"},
      {"model.attention_sinks=true"},
      {"model.qkv_bias=true", "model.o_bias=true", "model.mlp_bias=true"},
      {"model.norm=layernorm", "model.mlp=plain", "model.positions=learned", "model.qkv_bias=true", "model.o_bias=true",
       "model.mlp_bias=true", "model.tied_embeddings=true"},
  };
  for (const char* model : {"tiny-dense", "tiny-moe"})
    for (const std::vector<std::string>& variant : variants) {
      INFO(model << " " << variant[0] << " (" << variant.size() << " settings)");
      const mapping::Plan plan = plan_for(model, "tiny", variant);
      check_plan(plan, 17);
      check_plan(plan, 1);
    }
  INFO("shared experts");
  const mapping::Plan shared = plan_for("tiny-moe", "tiny", {"model.moe.n_shared_experts=1", "model.mlp=plain"});
  check_plan(shared, 17);
}

TEST_CASE("the distributed dataflow charges the FLOPs and weights of the decode graph", "[mapping][graph]") {
  const std::string distributed = "mapping.dataflow=distributed";
  for (const std::string& model : workloads::zoo_model_names()) {
    INFO(model);
    const bool tiny = model.rfind("tiny", 0) == 0;
    const mapping::Plan plan = plan_for(model, tiny ? "tiny" : "wse3", {distributed});
    check_plan(plan, plan.workload.prompt_tokens + 1);
  }
  const std::vector<std::vector<std::string>> variants = {
      {"model.norm=layernorm"},
      {"model.mlp=plain"},
      {"model.mlp=geglu"},
      {"model.parallel_residual=true"},
      {"model.rotary_dim=24"},
      {"model.rotary_dim=24", "model.qk_norm=true"},
      {"model.lm_head_bias=true"},
      {"model.positions=learned"},
      {"model.qk_norm=true"},
      {"model.attention_sinks=true"},
      {"model.n_heads=8", "model.head_dim=32", "model.n_kv_heads=1"},
      {"model.norm=layernorm", "model.mlp=plain", "model.positions=learned", "model.qkv_bias=true", "model.o_bias=true",
       "model.mlp_bias=true", "model.attention_sinks=true"},
  };
  for (const std::vector<std::string>& variant : variants) {
    INFO(variant[0] << " (" << variant.size() << " settings)");
    std::vector<std::string> overrides = variant;
    overrides.push_back(distributed);
    const mapping::Plan plan = plan_for("tiny-dense", "tiny", overrides);
    check_plan(plan, 17);
    check_plan(plan, 1);
  }
}
