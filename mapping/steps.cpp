// The steps of a block, each as tile programs (emit) and closed form (latency).
// Compute time of a block is that of the largest block (ceil of the split);
// the SRAM figures use each tile's exact share.
#include "mapping/steps.h"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>

#include "mapping/context_steps.h"
#include "mapping/kv_groups.h"
#include "mapping/line_tree.h"
#include "models/cost.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

// Size of part `index` when `total` is split into `parts` near-equal parts.
uint64_t chunk(uint64_t total, uint64_t parts, uint64_t index) {
  return total / parts + (index < total % parts ? 1 : 0);
}
uint64_t act_bytes(const StepEnv& env, uint64_t elements) { return dtype_bytes(env.activation, elements); }

// One tile's block of a GEMV, costed as the graph costs the whole matrix: it
// reads its weights (and bias) and its input slice and writes its partial sums.
Work block_work(const StepEnv& env, const GemvShape& shape, uint64_t block_in, uint64_t block_out, bool bias) {
  const uint64_t weights = shape.block_weights(block_in, block_out);
  return Work{workloads::ElementwiseFlops::kMultiplyAdd * weights + (bias ? block_out : 0),
              dtype_bytes(shape.weight, weights) + (bias ? dtype_bytes(shape.bias_dtype, block_out) : 0) +
                  act_bytes(env, block_in),
              dtype_bytes(env.partial_sum, block_out),
              shape.block_vector_instructions(block_in, block_out, env.vector_instruction_elements)};
}

class RootCompute final : public RootComputeStep {
 public:
  RootCompute(const StepEnv& env, const Work& work, Dtype dtype, Category category, uint64_t row_weights, Dtype weight)
      : RootComputeStep(env),
        work_(work),
        dtype_(dtype),
        category_(category),
        row_weights_(row_weights),
        weight_(weight) {}
  FrontKind input() const override { return FrontKind::Root; }
  FrontKind output() const override { return FrontKind::Root; }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (i == env_.geo.root_i() && j == env_.geo.root_j())
      out.push_back(compute().work(work_).dtype(dtype_).category(category_));
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
  }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    Front out = in;
    out.root = in.root.after(cycles(dtype_, work_), category_);
    return out;
  }
  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    return i == env_.geo.root_i() ? env_.geo.column_share(row_weights_, j) : 0;
  }
  uint64_t total_weight_elements() const override { return row_weights_; }
  uint64_t total_weight_bytes() const override { return dtype_bytes(weight_, row_weights_); }
  Dtype weight_dtype() const override { return weight_; }
  uint32_t patterns() const override { return 0; }
  uint16_t tags_used() const override { return 0; }

 private:
  Work work_;
  Dtype dtype_;
  Category category_;
  uint64_t row_weights_;
  Dtype weight_;
};

class Lookup final : public LookupStep {
 public:
  Lookup(const StepEnv& env, uint64_t table_elements, Dtype weight, uint64_t row_bytes)
      : LookupStep(env), table_elements_(table_elements), weight_(weight), row_bytes_(row_bytes) {}
  FrontKind input() const override { return FrontKind::Root; }
  FrontKind output() const override { return FrontKind::Root; }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const BlockGeometry& g = env_.geo;
    // The far corner, rows and columns away from the root.
    const int32_t far_i = int32_t(g.rows - 1 - g.root_i()), far_j = int32_t(g.cols - 1 - g.root_j());
    const bool root = i == g.root_i() && j == g.root_j(), far = i + 1 == g.rows && j + 1 == g.cols;
    // The engine routes X then Y and charges the turn when a send moves along both axes.
    if (root) out.push_back(send_local(far_i, far_j, 0).bytes(kRequestBytes).tag(env_.tag));
    if (far) {
      out.push_back(wait().tag(env_.tag).messages(1));
      out.push_back(send_local(-far_i, -far_j, 1).bytes(row_bytes_).tag(uint16_t(env_.tag + 1)));
    }
    if (root) out.push_back(wait().tag(uint16_t(env_.tag + 1)).messages(1));
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    out.push_back(index + 1 == (row ? env_.geo.rows : env_.geo.cols));
  }
  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    return latency_after(in, inputs, iteration, {});
  }
  // In a block one tile wide the far corner is the root column's last tile,
  // which may still be taking the previous iteration's slices.
  Front latency_after(const Front& in, const IterationInputs&, uint64_t,
                      const std::vector<Timed>& line_free) const override {
    const BlockGeometry& g = env_.geo;
    const uint32_t down = g.rows - 1 - g.root_i(), across = g.cols - 1 - g.root_j();
    const uint32_t hops = down + across, turns = down > 0 && across > 0 ? 1 : 0;
    Front out = in;
    Timed request = in.root.after(message_cycles_for_tokens(hops, turns, relays(0), kRequestBytes), Category::Fabric);
    if (g.cols == 1 && !line_free.empty()) request = later(line_free[g.rows - 1], request);
    out.root = request.after(message_cycles_for_tokens(hops, turns, relays(1), row_bytes_), Category::Fabric);
    return out;
  }
  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    return chunk(table_elements_, env_.geo.tiles(), uint64_t(i) * env_.geo.cols + j);
  }
  uint64_t total_weight_elements() const override { return table_elements_; }
  uint64_t total_weight_bytes() const override { return dtype_bytes(weight_, table_elements_); }
  Dtype weight_dtype() const override { return weight_; }
  uint32_t patterns() const override { return 2; }
  uint16_t tags_used() const override { return 2; }

 private:
  static constexpr uint64_t kRequestBytes = 4;  // the token id
  uint64_t table_elements_;
  Dtype weight_;
  uint64_t row_bytes_;
};

class GemvToColumn final : public GemvToColumnStep {
 public:
  // input_tag >= 0: x arrives on every root-row tile with that tag;
  // local_row: x is already there, slice j on (0, j).
  GemvToColumn(const StepEnv& env, const GemvShape& shape, int32_t input_tag, bool local_row)
      : GemvToColumnStep(env, input_tag >= 0 || local_row),
        shape_(shape),
        input_tag_(input_tag),
        local_row_(local_row) {
    const BlockGeometry& g = env.geo;
    block_in_ = g.largest_column_share(shape.d_in);
    block_out_ = g.largest_row_share(shape.d_out);
    // Without the multicast along the root row, patterns and tags start one earlier.
    down_ = local_row ? 0 : 1;
    // Partial sums reduce along each row to the root column.
    tree_.along_row = true;
    tree_.n = g.cols;
    tree_.tag = uint16_t(env.tag + down_ + 1);
    tree_.pattern = down_ + 1;
    tree_.bytes_per_position = dtype_bytes(env.partial_sum, block_out_);
    tree_.sum = env.partial_sum;
    work_ = block_work(env, shape, block_in_, block_out_, false);
    bias_work_ = block_work(env, shape, block_in_, block_out_, shape.bias);
  }
  FrontKind input() const override { return input_tag_ < 0 && !local_row_ ? FrontKind::Root : FrontKind::Row; }
  FrontKind output() const override { return FrontKind::Column; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const BlockGeometry& g = env_.geo;
    const uint16_t down_tag = uint16_t(env_.tag + down_);
    if (i == g.root_i()) {
      if (local_row_)
        ;  // the slice is here already
      else if (input_tag_ >= 0)
        out.push_back(wait().tag(uint16_t(input_tag_)).messages(1));
      else
        emit_line_multicast(g.cols, g.root_j(), j, g.across(), 0, act_bytes(env_, shape_.d_in), env_.tag, out);
    }
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), down_, act_bytes(env_, block_in_), down_tag, out);
    out.push_back(compute().work(j == g.root_j() ? bias_work_ : work_).dtype(shape_.weight));
    emit_tree(tree_, j, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (!row) tree_signature(tree_, index, out);
  }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    const BlockGeometry& g = env_.geo;
    const uint64_t c = cycles(shape_.weight, work_), c_bias = cycles(shape_.weight, bias_work_);
    // Row i sees row 0's arrivals shifted by the column multicast to row i.
    std::vector<Timed> ready(g.cols);
    for (uint32_t j = 0; j < g.cols; ++j) {
      const Timed arrival = input_tag_ >= 0 || local_row_
                                ? in.at[j]
                                : line_multicast_arrival(in.root, g.root_j(), j, act_bytes(env_, shape_.d_in), 0);
      ready[j] = arrival.after(j == g.root_j() ? c_bias : c, Category::Compute);
    }
    const Timed row_done = tree_time(tree_, std::move(ready));
    Front out{FrontKind::Column, {}, std::vector<Timed>(g.rows), {}};
    for (uint32_t i = 0; i < g.rows; ++i)
      out.at[i] = line_multicast_arrival(row_done, g.root_i(), i, act_bytes(env_, block_in_), down_);
    return out;
  }
  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    const BlockGeometry& g = env_.geo;
    return shape_.block_weights(g.row_share(shape_.d_out, i), g.column_share(shape_.d_in, j));
  }
  Dtype weight_dtype() const override { return shape_.weight; }
  uint64_t bias_elements(uint32_t i, uint32_t j) const override {
    return shape_.bias && j == env_.geo.root_j() ? env_.geo.row_share(shape_.d_out, i) : 0;
  }
  Dtype bias_dtype() const override { return shape_.bias_dtype; }
  uint64_t total_weight_elements() const override { return shape_.elements(); }
  uint64_t total_weight_bytes() const override { return shape_.bytes(); }
  uint64_t activation_bytes(uint32_t, uint32_t j) const override {
    // The chunk's input slices, a partial sum and one from the tree in flight,
    // and on the root column the chunk's sums (one token's is the partial).
    const uint64_t out = j == env_.geo.root_j() ? (env_.tokens - 1) * act_bytes(env_, block_out_) : 0;
    return for_tokens(act_bytes(env_, block_in_)) + 2 * dtype_bytes(env_.partial_sum, block_out_) + out;
  }
  uint32_t patterns() const override { return down_ + 1 + tree_patterns(env_.geo.cols); }
  uint16_t tags_used() const override { return uint16_t(patterns()); }

 private:
  GemvShape shape_;
  int32_t input_tag_;
  bool local_row_;
  uint32_t down_ = 1;  // pattern (and tag offset) of the multicast down the columns
  uint64_t block_in_ = 0, block_out_ = 0;
  Tree tree_;
  Work work_, bias_work_;  // bias_work_: on the tiles that hold the bias slices
};

class GemvToRow final : public GemvToRowStep {
 public:
  GemvToRow(const StepEnv& env, const GemvShape& shape) : GemvToRowStep(env), shape_(shape) {
    const BlockGeometry& g = env.geo;
    block_in_ = g.largest_row_share(shape.d_in);
    block_out_ = g.largest_column_share(shape.d_out);
    // Partial sums reduce down each column to the root row.
    tree_.along_row = false;
    tree_.n = g.rows;
    tree_.tag = uint16_t(env.tag + 1);
    tree_.pattern = 1;
    tree_.bytes_per_position = dtype_bytes(env.partial_sum, block_out_);
    tree_.sum = env.partial_sum;
    work_ = block_work(env, shape, block_in_, block_out_, false);
    bias_work_ = block_work(env, shape, block_in_, block_out_, shape.bias);
  }
  FrontKind input() const override { return FrontKind::Column; }
  FrontKind output() const override { return FrontKind::Row; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const BlockGeometry& g = env_.geo;
    emit_line_multicast(g.cols, g.root_j(), j, g.across(), 0, act_bytes(env_, block_in_), env_.tag, out);
    out.push_back(compute().work(i == g.root_i() ? bias_work_ : work_).dtype(shape_.weight));
    emit_tree(tree_, i, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (row) tree_signature(tree_, index, out);
  }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    const BlockGeometry& g = env_.geo;
    const uint64_t c = cycles(shape_.weight, work_), c_bias = cycles(shape_.weight, bias_work_);
    // Column j sees the root column's arrivals shifted by the row multicast to column j.
    std::vector<Timed> ready(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i) ready[i] = in.at[i].after(i == g.root_i() ? c_bias : c, Category::Compute);
    const Timed column_done = tree_time(tree_, std::move(ready));
    Front out{FrontKind::Row, {}, std::vector<Timed>(g.cols), {}};
    for (uint32_t j = 0; j < g.cols; ++j)
      out.at[j] = line_multicast_arrival(column_done, g.root_j(), j, act_bytes(env_, block_in_), 0);
    return out;
  }
  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    const BlockGeometry& g = env_.geo;
    return shape_.block_weights(g.row_share(shape_.d_in, i), g.column_share(shape_.d_out, j));
  }
  Dtype weight_dtype() const override { return shape_.weight; }
  uint64_t bias_elements(uint32_t i, uint32_t j) const override {
    return shape_.bias && i == env_.geo.root_i() ? env_.geo.column_share(shape_.d_out, j) : 0;
  }
  Dtype bias_dtype() const override { return shape_.bias_dtype; }
  uint64_t total_weight_elements() const override { return shape_.elements(); }
  uint64_t total_weight_bytes() const override { return shape_.bytes(); }
  uint64_t activation_bytes(uint32_t i, uint32_t) const override {
    // As GemvToColumn's, the chunk's sums on the root row.
    const uint64_t out = i == env_.geo.root_i() ? (env_.tokens - 1) * act_bytes(env_, block_out_) : 0;
    return for_tokens(act_bytes(env_, block_in_)) + 2 * dtype_bytes(env_.partial_sum, block_out_) + out;
  }
  uint32_t patterns() const override { return 1 + tree_patterns(env_.geo.rows); }
  uint16_t tags_used() const override { return uint16_t(patterns()); }

 private:
  GemvShape shape_;
  uint64_t block_in_ = 0, block_out_ = 0;
  Tree tree_;
  Work work_, bias_work_;  // bias_work_: on the tiles that hold the bias slices
};

// Element-wise work on the root column's slices, or (along_row) the root row's.
class ColumnCompute final : public LineComputeStep {
 public:
  // kept_bytes: per token, what each line tile keeps for later steps (the residual stream's slice).
  ColumnCompute(const StepEnv& env, const Work& work, Dtype dtype, bool along_row, uint64_t line_weights, Dtype weight,
                uint64_t kept_bytes = 0)
      : LineComputeStep(env, along_row),
        work_(work),
        dtype_(dtype),
        line_weights_(line_weights),
        weight_(weight),
        kept_bytes_(kept_bytes) {}
  FrontKind input() const override { return along_row() ? FrontKind::Row : FrontKind::Column; }
  FrontKind output() const override { return input(); }
  bool on_line(uint32_t i, uint32_t j) const { return along_row() ? i == env_.geo.root_i() : j == env_.geo.root_j(); }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (on_line(i, j)) out.push_back(compute().work(work_).dtype(dtype_));
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    // Tiles off the line do nothing: the index across the line decides.
    if (row == along_row()) out.push_back(index == root_index(row));
  }
  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    if (!on_line(i, j)) return 0;
    return along_row() ? env_.geo.column_share(line_weights_, j) : env_.geo.row_share(line_weights_, i);
  }
  uint64_t total_weight_elements() const override { return line_weights_; }
  uint64_t total_weight_bytes() const override { return dtype_bytes(weight_, line_weights_); }
  Dtype weight_dtype() const override { return weight_; }
  uint64_t kept_bytes(uint32_t i, uint32_t j) const override { return on_line(i, j) ? for_tokens(kept_bytes_) : 0; }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    Front out = in;
    const uint64_t c = cycles(dtype_, work_);
    for (Timed& t : out.at) t = t.after(c, Category::Compute);
    return out;
  }
  uint32_t patterns() const override { return 0; }
  uint16_t tags_used() const override { return 0; }

 private:
  Work work_;
  Dtype dtype_;
  uint64_t line_weights_;
  Dtype weight_;
  uint64_t kept_bytes_;
};

// The root multicasts a payload down the root column, or (along_row) along the root row.
class ColumnBroadcast final : public BroadcastStep {
 public:
  ColumnBroadcast(const StepEnv& env, uint64_t bytes, uint64_t keep_bytes, bool along_row)
      : BroadcastStep(env, along_row), bytes_(bytes), keep_bytes_(keep_bytes) {}
  FrontKind input() const override { return FrontKind::Root; }
  FrontKind output() const override { return along_row() ? FrontKind::Row : FrontKind::Column; }
  uint32_t line_tiles() const { return along_row() ? env_.geo.cols : env_.geo.rows; }
  // The root's place along the line and the line's place across the block.
  uint32_t line_root() const { return along_row() ? env_.geo.root_j() : env_.geo.root_i(); }
  uint32_t line_place() const { return along_row() ? env_.geo.root_i() : env_.geo.root_j(); }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const uint32_t across = along_row() ? i : j, along = along_row() ? j : i;
    if (across != line_place()) return;
    emit_line_multicast(line_tiles(), line_root(), along, along_row() ? env_.geo.across() : env_.geo.down(), 0, bytes_,
                        env_.tag, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
  }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    Front out{output(), {}, std::vector<Timed>(line_tiles()), {}};
    for (uint32_t k = 0; k < line_tiles(); ++k) out.at[k] = line_multicast_arrival(in.root, line_root(), k, bytes_, 0);
    return out;
  }
  uint64_t activation_bytes(uint32_t i, uint32_t j) const override {
    // The payload streams past: a tile keeps its part and a stream buffer.
    const uint32_t across = along_row() ? i : j, along = along_row() ? j : i;
    return across == line_place() && along != line_root()
               ? std::min(for_tokens(bytes_), for_tokens(keep_bytes_) + env_.stream_buffer_bytes)
               : 0;
  }
  uint32_t patterns() const override { return line_tiles() > 1 ? 1 : 0; }
  uint16_t tags_used() const override { return 1; }

 private:
  uint64_t bytes_, keep_bytes_;
};

// Gathers (or reduces) slices on the root column (along_row = false) or row.
class GatherToRoot final : public GatherStep {
 public:
  GatherToRoot(const StepEnv& env, bool along_row, uint64_t bytes_per_position, bool reduce)
      : GatherStep(env, along_row, reduce) {
    tree_.along_row = along_row;
    tree_.n = along_row ? env.geo.cols : env.geo.rows;
    tree_.tag = env.tag;
    tree_.pattern = 0;
    tree_.gather = !reduce;
    tree_.bytes_per_position = bytes_per_position;
  }
  FrontKind input() const override { return tree_.along_row ? FrontKind::Row : FrontKind::Column; }
  FrontKind output() const override { return FrontKind::Root; }
  // Whether tile (i, j) is on the line the tree runs along.
  bool on_line(uint32_t i, uint32_t j) const {
    return tree_.along_row ? i == env_.geo.root_i() : j == env_.geo.root_j();
  }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (on_line(i, j)) emit_tree(tree_, tree_.along_row ? j : i, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (row != tree_.along_row) tree_signature(tree_, index, out);
  }
  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    if (tree_.along_row) return Front::at_root(tree_time(tree_, in.at));
    std::vector<Timed> done;
    Front out = Front::at_root(tree_time(tree_, in.at, &done));
    out.line_done = std::move(done);
    return out;
  }
  Timed heads_at_root(const Front& in) const override {
    Timed heads;
    tree_time(tree_, in.at, nullptr, &heads);
    return heads;
  }
  uint64_t activation_bytes(uint32_t i, uint32_t j) const override {
    // Slices stream through the nodes of a gather on their way to the root: a
    // node keeps its own slice and a stream buffer, not its whole subtree (the
    // timing still forwards a subtree only once all of it has arrived).
    const uint32_t position = tree_.along_row ? j : i;
    if (!on_line(i, j) || position == env_.geo.line_root(tree_.n)) return 0;
    const LineRole& role = tree_role_at(tree_, position);
    const uint64_t subtree = tree_payload(tree_, role.first, role.size);
    return std::min(for_tokens(subtree), for_tokens(tree_payload(tree_, position, 1)) + env_.stream_buffer_bytes);
  }
  uint32_t patterns() const override { return tree_patterns(tree_.n); }
  uint16_t tags_used() const override { return uint16_t(patterns()); }

 private:
  Tree tree_;
};

class Attention final : public AttentionStep {
 public:
  // row_io: q/k/v arrive as slices on the root row (slice_bytes per column)
  // and the output leaves there (Front::Row); otherwise root to root.
  Attention(const StepEnv& env, const AttentionShape& shape, bool row_io, uint64_t slice_bytes)
      : AttentionStep(env, shape.n_kv_heads, shape.n_heads, row_io ? shape.kv_copies : 1, shape.window,
                      shape.sinks.flops > 0, row_io),
        shape_(shape) {
    const BlockGeometry& g = env.geo;
    const uint64_t queries = groups().queries_per_group;
    row_bytes_ = act_bytes(env, uint64_t(shape.n_heads) * shape.key_dim + uint64_t(shape.n_kv_heads) * shape.entry_dim);
    kv_bytes_ = act_bytes(env, uint64_t(groups().heads_per_group) * shape.entry_dim);
    column_bytes_ = act_bytes(env, queries * shape.key_dim) + kv_bytes_;
    // Flash-decoding partial per query head: the weighted sum (activation format) and its max and sum (fp32).
    partial_bytes_ = queries * (act_bytes(env, shape.value_dim) + 2 * 4);
    fixed_ = Work{0, column_bytes_, partial_bytes_};
    // Per position: q.k, softmax and p.v of each query head of the group.
    per_position_ = Work{queries * shape.flops_per_score,
                         dtype_bytes(shape.kv, uint64_t(groups().heads_per_group) * shape.entry_dim), 0};
    const uint32_t column_levels = tree_patterns(g.rows);
    // Partials reduce down each column.
    column_tree_.along_row = false;
    column_tree_.n = g.rows;
    column_tree_.bytes_per_position = partial_bytes_;
    if (!row_io) {
      // The root multicasts q/k/v along the root row (pattern 0), each (0, j) down
      // its column (1); the root row gathers one partial per KV head group.
      down_ = 1;
      column_tree_.tag = uint16_t(env.tag + 2);
      column_tree_.pattern = 2;
      row_tree_.along_row = true;
      row_tree_.n = g.cols;
      row_tree_.tag = uint16_t(env.tag + 2 + column_levels);
      row_tree_.pattern = 2 + column_levels;
      row_tree_.gather = true;
      row_tree_.bytes_per_position = partial_bytes_;
      row_tree_.group = groups().of;
      patterns_ = 2 + column_levels + tree_patterns(g.cols);
      tags_used_ = uint16_t(patterns_);
      return;
    }
    // Row input and output, per group of columns, positions relative to the
    // group's first column: gather the q/k/v slices there, multicast them along
    // the group, down the columns, reduce the columns, reduce along the group,
    // multicast the group's output along the group. The reduce along the group
    // takes the routes of the gather, and the output multicast the route of
    // the q/k/v multicast, later in the step: they reuse those routes' colours
    // (patterns) under tags of their own. The multicasts along a group only
    // when a group has more than one column.
    // Groups are one of two widths; chains of different widths may take different patterns.
    uint32_t group_levels = 0;
    for (uint32_t group = 0; group < groups().count; ++group)
      group_levels = std::max(group_levels, tree_patterns(group_columns(group)));
    const uint32_t along = groups().widest > 1 ? 1 : 0;
    uint32_t next = 0;
    gather_tree_.along_row = true;
    gather_tree_.gather = true;
    gather_tree_.bytes_per_position = slice_bytes;
    gather_tree_.pattern = next;
    group_tree_.along_row = true;
    group_tree_.bytes_per_position = partial_bytes_;
    group_tree_.pattern = next;
    next += group_levels;
    along_ = next;
    next += along;
    // With copies, the key and value go along all the copies of a KV head on a route of their own.
    if (copied()) kv_along_ = next++;
    down_ = next++;
    column_tree_.pattern = next;
    next += column_levels;
    patterns_ = next;
    for (Tree* tree : {&gather_tree_, &column_tree_}) tree->tag = uint16_t(env.tag + tree->pattern);
    qkv_multicast_tag_ = uint16_t(env.tag + along_);
    kv_multicast_tag_ = uint16_t(env.tag + kv_along_);
    group_tree_.tag = uint16_t(env.tag + patterns_);
    out_multicast_tag_ = uint16_t(group_tree_.tag + group_levels);
    tags_used_ = uint16_t(patterns_ + group_levels + along);
    // With copies a group's own multicast carries its query heads only.
    along_bytes_ = copied() ? column_bytes_ - kv_bytes_ : column_bytes_;
    out_bytes_ = act_bytes(env, queries * shape.value_dim);
    // Each group's first column adds the sink logits of the group's query heads.
    if (shape.n_heads > 0 && shape.sinks.flops > 0) {
      const uint64_t heads = queries;
      // The group's share of each figure, rounded up: sub-byte sink formats (int4, mxfp4) must not round to zero.
      auto share = [&](uint64_t total) { return (total * heads + shape.n_heads - 1) / shape.n_heads; };
      group_sinks_ = Work{share(shape.sinks.flops), share(shape.sinks.read_bytes), share(shape.sinks.write_bytes)};
    }
  }
  FrontKind input() const override { return row_io() ? FrontKind::Row : FrontKind::Root; }
  FrontKind output() const override { return input(); }

  uint32_t group_columns(uint32_t group) const { return groups().columns(group); }
  uint32_t group_tiles(uint32_t j) const { return group_columns(groups().of[j]) * env_.geo.rows; }
  Task attend_task(uint32_t j) const { return kv_compute(fixed_, per_position_, group_tiles(j), shape_.window); }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (row_io()) return emit_row_io(i, j, out);
    const BlockGeometry& g = env_.geo;
    const bool root_row = i == g.root_i();
    if (root_row) emit_line_multicast(g.cols, g.root_j(), j, g.across(), 0, row_bytes_, env_.tag, out);
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), 1, column_bytes_, uint16_t(env_.tag + 1), out);
    out.push_back(attend_task(j));
    emit_tree(column_tree_, i, out);
    if (root_row) emit_tree(row_tree_, j, out);
    if (root_row && j == g.root_j() && sinks()) out.push_back(compute().work(shape_.sinks).dtype(env_.activation));
  }
  // The column of group `group` its gathers and multicasts along the group have as their root.
  uint32_t group_root(uint32_t group) const { return env_.geo.line_root(group_columns(group)); }
  void emit_row_io(uint32_t i, uint32_t j, std::vector<Task>& out) const {
    const BlockGeometry& g = env_.geo;
    const uint32_t group = groups().of[j], columns = group_columns(group), p = j - group_start()[group];
    const uint32_t root = group_root(group);
    const uint16_t down_tag = uint16_t(env_.tag + down_);
    // A multicast along the group from its root column, or the wait for it.
    auto along = [&](uint16_t tag, uint64_t bytes) {
      emit_line_multicast(columns, root, p, g.across(), along_, bytes, tag, out);
    };
    if (i == g.root_i()) {
      emit_tree(resized(gather_tree_, columns), p, out);
      const bool kv_source = p == root && groups().first_copy(group) == group;
      if (kv_source && copied()) {
        // Along all the copies of the KV head, from the first copy's root column.
        const uint32_t copy_columns = groups().copy_columns(group);
        emit_line_multicast(copy_columns, root, root, g.across(), kv_along_, kv_bytes_, kv_multicast_tag_, out);
      }
      along(qkv_multicast_tag_, along_bytes_);
      if (!kv_source && copied()) out.push_back(wait().tag(kv_multicast_tag_).messages(1));
    }
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), down_, column_bytes_, down_tag, out);
    out.push_back(attend_task(j));
    emit_tree(column_tree_, i, out);
    if (i != g.root_i()) return;
    emit_tree(resized(group_tree_, columns), p, out);
    if (p == root && sinks()) out.push_back(compute().work(group_sinks_).dtype(env_.activation));
    along(out_multicast_tag_, out_bytes_);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (row) {
      tree_signature(column_tree_, index, out);
    } else if (row_io()) {
      // Everything a column does follows from its group's width and its place in the group.
      const uint32_t group = groups().of[index];
      out.push_back(group_tiles(index));
      out.push_back(group_columns(group));
      out.push_back(index - group_start()[group]);
      if (copied()) {
        const uint32_t first = groups().first_copy(group);
        out.push_back(groups().copy_columns(group));
        out.push_back(first == group);
      }
    } else {
      out.push_back(group_tiles(index));
      tree_signature(row_tree_, index, out);
    }
  }
  bool has_kv_offset() const override { return true; }
  uint32_t kv_offset(uint32_t i, uint32_t j) const override {
    return (j - group_start()[groups().of[j]]) * env_.geo.rows + i;
  }
  uint64_t kv_bytes(uint32_t i, uint32_t j, uint64_t context) const override {
    return positions_held(attended(context), group_tiles(j), kv_offset(i, j)) * per_position_.read_bytes;
  }
  uint64_t total_kv_bytes(uint64_t context) const override {
    return uint64_t(groups().count) * attended(context) *
           per_position_.read_bytes;  // each group holds every position once
  }
  // Off the root row, whether tile (i, j) scores any position at the workload's largest context. A column
  // tree node's subtree lies farther from the root: below it, later offsets, so a node there that scores
  // nothing only forwards empty partials. Above a middle root the subtree holds earlier offsets: the column's
  // first tile answers for it.
  bool scores(uint32_t i, uint32_t j) const {
    const uint32_t root = env_.geo.root_i();
    return i == root || shape_.max_positions == 0 || kv_offset(i < root ? 0 : i, j) < shape_.max_positions;
  }
  // The chunk's queries and keys and their partials, and one partial from the tree in flight.
  uint64_t attention_buffers() const { return for_tokens(column_bytes_ + partial_bytes_) + partial_bytes_; }
  uint64_t activation_bytes(uint32_t i, uint32_t j) const override {
    if (!scores(i, j)) return 0;
    // Row input and output: root-row tiles also receive their group's output.
    return attention_buffers() + (row_io() && i == env_.geo.root_i() ? for_tokens(out_bytes_) : 0);
  }
  uint64_t max_context(uint32_t i, uint32_t j, uint64_t free_bytes) const override {
    if (shape_.window > 0 && positions_held(shape_.window, group_tiles(j), kv_offset(i, j)) == 0)
      return UINT64_MAX;  // the window never reaches this tile
    if (!scores(i, j)) {
      // Its first position brings the attention buffers (counted whole, on top of the other steps' buffers).
      if (free_bytes < attention_buffers()) return kv_offset(i, j);
      free_bytes -= attention_buffers();
    }
    return context_held(free_bytes, per_position_.read_bytes, kv_offset(i, j), group_tiles(j));
  }

  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    const BlockGeometry& g = env_.geo;
    const uint64_t positions = attended(inputs.context(iteration));
    if (row_io()) {
      Front out{FrontKind::Row, {}, std::vector<Timed>(g.cols), {}};
      const std::vector<Timed> gathered = gathered_inputs(in);
      for (uint32_t group = 0; group < groups().count; ++group) {
        const uint32_t start = group_start()[group], columns = group_columns(group);
        const Timed combined = group_output(gathered, group, positions);
        for (uint32_t p = 0; p < columns; ++p)
          out.at[start + p] = line_multicast_arrival(combined, group_root(group), p, out_bytes_, along_);
      }
      return out;
    }
    return Front::at_root(root_output(in, positions));
  }
  // The output changes only where a group's output does (or, root to root,
  // the root's): each found by bisection over the contexts, which costs one
  // group's tree per evaluation rather than the whole step's.
  std::optional<std::vector<uint64_t>> context_starts(const Front& in,
                                                      const std::vector<uint64_t>& contexts) const override {
    std::vector<uint64_t> starts;
    auto add_starts = [&](const std::function<Timed(uint64_t positions)>& output) {
      const ContextSteps<Timed> steps(contexts, [&](uint64_t context) { return output(attended(context)); });
      const std::vector<uint64_t> more = steps.starts();
      starts.insert(starts.end(), more.begin(), more.end());
    };
    if (row_io()) {
      const std::vector<Timed> gathered = gathered_inputs(in);
      // Without copies a group's output is its gathered input followed by what
      // its width alone sets: groups of one width change output together.
      std::vector<uint32_t> widths_done;
      for (uint32_t group = 0; group < groups().count; ++group) {
        const uint32_t width = group_columns(group);
        if (!copied() && std::find(widths_done.begin(), widths_done.end(), width) != widths_done.end()) continue;
        widths_done.push_back(width);
        add_starts([&](uint64_t positions) { return group_output(gathered, group, positions); });
      }
    } else {
      add_starts([&](uint64_t positions) { return root_output(in, positions); });
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    return starts;
  }
  uint32_t patterns() const override { return patterns_; }
  uint16_t tags_used() const override { return tags_used_; }

 private:
  Work with_positions(uint64_t positions) const { return fixed_ + per_position_ * positions; }

  // Column j's tiles hold either `base` or `base + 1` positions; its tree
  // time depends only on `base` and how many of its rows hold one more.
  Timed column(uint32_t j, uint64_t positions) const {
    const uint64_t group = group_tiles(j);
    const uint64_t base = positions / group, extra = positions % group;
    const uint64_t first = uint64_t(j - group_start()[groups().of[j]]) * env_.geo.rows;
    const uint64_t longer_rows = extra > first ? std::min<uint64_t>(extra - first, env_.geo.rows) : 0;
    return column_time(base, longer_rows);
  }
  // Row input: when each group's q/k/v slices were gathered at its root column.
  std::vector<Timed> gathered_inputs(const Front& in) const {
    std::vector<Timed> gathered(groups().count);
    for (uint32_t group = 0; group < groups().count; ++group) {
      const uint32_t start = group_start()[group], columns = group_columns(group);
      gathered[group] = tree_time(resized(gather_tree_, columns),
                                  std::vector<Timed>(in.at.begin() + start, in.at.begin() + start + columns));
    }
    return gathered;
  }
  // Row input: when a group's output is combined at its root column.
  Timed group_output(const std::vector<Timed>& gathered, uint32_t group, uint64_t positions) const {
    const uint32_t start = group_start()[group], columns = group_columns(group);
    const uint32_t root = group_root(group);
    // With copies, column j also waits for the key and value from its KV head's first copy's root column.
    const uint32_t first_copy = groups().first_copy(group);
    const uint32_t source = group_start()[first_copy] + group_root(first_copy);
    auto with_kv = [&](const Timed& q, uint32_t j) {
      if (!copied() || j == source) return q;
      return later(q, line_multicast_arrival(gathered[first_copy], source, j, kv_bytes_, kv_along_));
    };
    // Columns before `partial` hold base + 1 positions in every row, those after it base (column()).
    const uint32_t rows = env_.geo.rows;
    const uint64_t base = positions / (uint64_t(columns) * rows), extra = positions % (uint64_t(columns) * rows);
    const uint64_t partial = extra / rows;
    const Timed longer = column_time(base, rows), shorter = column_time(base, 0);
    std::vector<Timed> ready(columns);
    for (uint32_t p = 0; p < columns; ++p)
      ready[p] = with_kv(line_multicast_arrival(gathered[group], root, p, along_bytes_, along_), start + p)
                     .then(p < partial   ? longer
                           : p > partial ? shorter
                                         : column_time(base, extra % rows));
    const Timed combined = tree_time(resized(group_tree_, columns), std::move(ready));
    return sinks() ? combined.after(cycles(env_.activation, group_sinks_), Category::Compute) : combined;
  }
  // Root to root: when the root holds the output.
  Timed root_output(const Front& in, uint64_t positions) const {
    const BlockGeometry& g = env_.geo;
    std::vector<Timed> row_ready(g.cols);
    for (uint32_t j = 0; j < g.cols; ++j)
      row_ready[j] = line_multicast_arrival(in.root, g.root_j(), j, row_bytes_, 0).then(column(j, positions));
    const Timed combined = tree_time(row_tree_, std::move(row_ready));
    return sinks() ? combined.after(cycles(env_.activation, shape_.sinks), Category::Compute) : combined;
  }
  // A column's tree time, measured from the q multicast reaching the root row,
  // when its first `longer_rows` rows hold base + 1 positions and the rest
  // base. The closed form's tables ask for the same few over and over as the
  // context moves on (mapping/region_spans.h), so they are kept.
  Timed column_time(uint64_t base, uint64_t longer_rows) const {
    const std::pair<uint64_t, uint64_t> key{base, longer_rows};
    {
      const std::lock_guard<std::mutex> lock(column_times_mutex_);
      if (auto it = column_times_.find(key); it != column_times_.end()) return it->second;
    }
    const BlockGeometry& g = env_.geo;
    const uint64_t c_long = cycles(env_.activation, with_positions(base + 1));
    const uint64_t c_short = cycles(env_.activation, with_positions(base));
    std::vector<Timed> ready(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i)
      ready[i] = line_multicast_arrival(Timed{}, g.root_i(), i, column_bytes_, down_)
                     .after(i < longer_rows ? c_long : c_short, Category::Compute);
    const Timed time = tree_time(column_tree_, std::move(ready));
    const std::lock_guard<std::mutex> lock(column_times_mutex_);
    if (column_times_.size() >= kColumnTimesKept) column_times_.clear();  // bounded, whatever the context
    column_times_.emplace(key, time);
    return time;
  }
  static constexpr size_t kColumnTimesKept = size_t(1) << 16;
  mutable std::map<std::pair<uint64_t, uint64_t>, Timed> column_times_;  // by (base, longer rows)
  mutable std::mutex column_times_mutex_;                                // a plan may be timed on several threads

  bool copied() const { return groups().copies > 1; }

  AttentionShape shape_;
  uint64_t row_bytes_ = 0, column_bytes_ = 0, partial_bytes_ = 0, out_bytes_ = 0;
  uint64_t kv_bytes_ = 0;     // a group's keys and values
  uint64_t along_bytes_ = 0;  // of the multicast along a group: its q/k/v, or with copies its queries
  Work fixed_, per_position_, group_sinks_;
  // Patterns: down the columns, along a group, along a KV head's copies, all.
  uint32_t down_ = 1, along_ = 0, kv_along_ = 0, patterns_ = 0;
  uint16_t qkv_multicast_tag_ = 0, kv_multicast_tag_ = 0, out_multicast_tag_ = 0, tags_used_ = 0;
  Tree column_tree_, row_tree_;    // root to root
  Tree gather_tree_, group_tree_;  // row input and output: templates, n set per group
};

}  // namespace

std::unique_ptr<Step> root_compute_step(const StepEnv& env, const Work& work, Dtype dtype, Category category,
                                        uint64_t row_weight_elements, Dtype weight) {
  return std::make_unique<RootCompute>(env, work, dtype, category, row_weight_elements, weight);
}
std::unique_ptr<Step> lookup_step(const StepEnv& env, uint64_t table_elements, Dtype weight, uint64_t row_bytes) {
  return std::make_unique<Lookup>(env, table_elements, weight, row_bytes);
}
std::unique_ptr<Step> gemv_to_column_step(const StepEnv& env, const GemvShape& shape, int32_t input_tag) {
  return std::make_unique<GemvToColumn>(env, shape, input_tag, false);
}
std::unique_ptr<Step> gemv_row_to_column_step(const StepEnv& env, const GemvShape& shape) {
  return std::make_unique<GemvToColumn>(env, shape, -1, true);
}
std::unique_ptr<Step> gemv_to_row_step(const StepEnv& env, const GemvShape& shape) {
  return std::make_unique<GemvToRow>(env, shape);
}
std::unique_ptr<Step> column_compute_step(const StepEnv& env, const Work& work, Dtype dtype, bool along_row,
                                          uint64_t line_weight_elements, Dtype weight) {
  return std::make_unique<ColumnCompute>(env, work, dtype, along_row, line_weight_elements, weight);
}
std::unique_ptr<Step> stream_compute_step(const StepEnv& env, const Work& work, Dtype dtype, uint64_t slice_bytes) {
  return std::make_unique<ColumnCompute>(env, work, dtype, false, 0, Dtype::BF16, slice_bytes);
}
std::unique_ptr<Step> column_broadcast_step(const StepEnv& env, uint64_t bytes, uint64_t keep_bytes) {
  return std::make_unique<ColumnBroadcast>(env, bytes, keep_bytes, false);
}
std::unique_ptr<Step> row_broadcast_step(const StepEnv& env, uint64_t bytes) {
  return std::make_unique<ColumnBroadcast>(env, bytes, bytes, true);
}
std::unique_ptr<Step> gather_column_step(const StepEnv& env, uint64_t bytes_per_position, bool reduce) {
  return std::make_unique<GatherToRoot>(env, false, bytes_per_position, reduce);
}
std::unique_ptr<Step> gather_row_step(const StepEnv& env, uint64_t bytes_per_position, bool reduce) {
  return std::make_unique<GatherToRoot>(env, true, bytes_per_position, reduce);
}
std::unique_ptr<Step> attention_step(const StepEnv& env, const AttentionShape& shape) {
  return std::make_unique<Attention>(env, shape, false, 0);
}
std::unique_ptr<Step> row_attention_step(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes) {
  return std::make_unique<Attention>(env, shape, true, slice_bytes);
}

}  // namespace wafersim::mapping
