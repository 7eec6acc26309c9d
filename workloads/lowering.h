#pragma once
// How the compiler lowers the graph (graph.h) onto its steps: one table per
// layer kind, each row a step of the region's chain (mapping/regions.cpp)
// by its label, with the graph ops whose work it does. The compiler refuses
// a step without a row, `describe model` names each op's steps from it, and
// the graph-agreement test (tests/mapping) compares plan and graph through
// it. Knows no hardware: a step is only its label here.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::workloads {

enum class LayerLowering : uint8_t {
  Embedding,
  Layer,                // a dense layer, the vector at the root between steps (mapping.dataflow: root)
  DistributedLayer,     // a dense layer on slices (mapping.dataflow: distributed)
  MoeLayer,             // an MoE layer's main block: attention, router, dispatch (mapping.dataflow: root)
  DistributedMoeLayer,  // an MoE layer's main block on slices (mapping.dataflow: distributed)
  Expert,               // an MoE layer's expert block (routed or shared)
  Head,                 // final norm, LM head, sampling
};
const char* to_string(LayerLowering kind);

// The layers a row is for: all of them, or those with (or without) a
// parallel residual (model.parallel_residual), whose MLP takes the input norm.
enum class ResidualForm : uint8_t { Any, Sequential, Parallel };

struct StepLowering {
  std::string step;              // the step's label
  std::vector<std::string> ops;  // graph op names, after "layers.L." and an expert's prefix
  // Steps whose work the graph counts in one op are compared together: a step
  // that does part of an op another row names first names that op here
  // ("attn_norm"); one that only moves data names "moves" or "gathers".
  // Empty: its first op.
  std::string group;
  ResidualForm residual = ResidualForm::Any;
};

// The rows of one layer kind, in chain order; steps a model does not need
// (a learned position's add, a split head's q/k norm) are left out of its chain.
const std::vector<StepLowering>& lowering_table(LayerLowering kind);
// The row of `step` in `kind`'s table, or nullptr.
const StepLowering* find_lowering(LayerLowering kind, const std::string& step);
// The steps of `kind` that do the work of graph op `op` (its name after the
// layer and expert prefixes) in a layer with or without a parallel residual.
std::vector<std::string> steps_of_op(LayerLowering kind, const std::string& op, bool parallel_residual);

}  // namespace wafersim::workloads
