#pragma once
// Attention laid out as WaferLLM's decode kernel lays it (mapping.attention:
// grid): the step kind and its factory (grid_attention.cpp).
#include <memory>

#include "mapping/steps.h"

namespace wafersim::mapping {

// Between slices on the root row, laid out as WaferLLM's decode kernel lays
// attention: within each KV-head group, column j holds a run of the group's
// head dimensions (each rotary pair together) of every position the column
// holds, and row i the positions p with p mod rows == i.
class GridAttentionStep : public KvGroupAttention {
 public:
  using KvGroupAttention::KvGroupAttention;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// Each root-row tile
// multicasts its q/k/v slice down its column; every tile scores its positions
// over its dimensions; in every row the partial scores are summed along the
// group's columns and returned along them; the softmax's max and sum each
// reduce down every column (fp32) and return down it; each tile weights its
// values, and the output slices reduce down each column to the root row.
// Score messages are sized for the workload's largest context, as the
// kernel's fixed score buffers are.
std::unique_ptr<Step> grid_attention_step(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes);

}  // namespace wafersim::mapping
