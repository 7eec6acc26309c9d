#pragma once
// Attention laid out as WaferLLM's decode kernel lays it (mapping.attention:
// grid): the step kind and its factory (grid_attention.cpp).
#include <memory>
#include <optional>

#include "mapping/steps.h"

namespace wafersim::mapping {

// Between slices on the root row, laid out as WaferLLM's decode kernel lays
// attention: within each KV-head group, column j holds a run of the group's
// head dimensions (each rotary pair together) of every position the column
// holds, and row i the positions p with p mod rows == i.
class GridAttentionStep : public KvGroupAttention {
 public:
  GridAttentionStep(const StepEnv& env, uint32_t kv_heads, uint32_t query_heads, uint32_t window, bool sinks,
                    std::optional<KvGroups> kv_move)
      : KvGroupAttention(env, kv_heads, query_heads, /*kv_copies=*/1, window, sinks), kv_move_(std::move(kv_move)) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  // A prefill's grid under decode's groups: decode's attention groups, to
  // whose tiles every row moves the keys and values it stores (none: decode
  // reads the grid's own entries).
  const std::optional<KvGroups>& kv_move() const { return kv_move_; }

 private:
  std::optional<KvGroups> kv_move_;
};

// Each root-row tile
// multicasts its q/k/v slice down its column; every tile scores its positions
// over its dimensions; in every row the partial scores are summed along the
// group's columns and returned along them; the softmax's max and sum each
// reduce down every column (fp32) and return down it; each tile weights its
// values, and the output slices reduce down each column to the root row.
// Score messages are sized for the workload's largest context, as the
// kernel's fixed score buffers are.
//
// With `kv_move` (a prefill whose decode lays attention out in groups, which
// every copy of a KV head keeps whole) every row also moves the keys and values
// of the chunk's positions it stores (p mod rows == i, as decode's groups put
// them: a group's tiles hold offsets column x rows + row) to their tiles in
// decode's groups, right after the slices come down: the row's columns of each
// KV head gather their parts of those entries at the line's root, which
// multicasts the whole entries along them and each column keeps its own.
// Every row moves ceil(chunk / rows) entries (an upper bound where the chunk
// does not fill the rows evenly). The SRAM holds both: the grid's entries of
// the longest prompt (`prompt_positions`) for the prefill's own attention,
// and decode's cache at the workload's largest context.
std::unique_ptr<Step> grid_attention_step(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes,
                                          std::optional<KvGroups> kv_move = std::nullopt,
                                          uint64_t prompt_positions = 0);

}  // namespace wafersim::mapping
