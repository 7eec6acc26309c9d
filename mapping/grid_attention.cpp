// Attention laid out as WaferLLM's decode kernel lays it (mapping.attention:
// grid; MeshInfra/WaferLLM, Decode/*/src/decode.csl): head dimensions along
// the columns, positions along the rows. docs/MAPPING.md has the picture.
#include "mapping/grid_attention.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "mapping/kv_groups.h"
#include "models/cost.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The KV move of a prefill's grid under decode's groups (grid_attention.h):
// in every row, the columns of each KV head gather their parts of the entries
// the row stores to the line's root, which multicasts the whole entries along
// them. Its own environment carries the entries one row moves, not the
// chunk, so its messages scale by those (Step::emit_tokens); it is a part of
// GridAttention's programs and closed form, never a step of a chain.
class RowKvMove final : public Step {
 public:
  // `lines`: the grid's groups; `part_bytes`: one entry's largest part on a
  // column; `entry_bytes`: one entry of a line's KV heads; `tree_pattern` and
  // `along_pattern`: the routes of the grid's score sums along its groups.
  RowKvMove(const StepEnv& env, const KvGroups& lines, uint64_t part_bytes, uint64_t entry_bytes, uint32_t tree_pattern,
            uint32_t along_pattern)
      : Step(env), lines_(lines), entry_bytes_(entry_bytes), along_pattern_(along_pattern) {
    gather_.along_row = true;
    gather_.gather = true;
    gather_.bytes_per_position = part_bytes;
    gather_.pattern = tree_pattern;
    gather_.tag = env.tag;
    multicast_tag_ = uint16_t(env.tag + tree_levels_of_widest());
  }

  FrontKind input() const override { return FrontKind::Row; }
  FrontKind output() const override { return FrontKind::Row; }
  void emit(uint32_t, uint32_t j, std::vector<Task>& out) const override {
    const uint32_t line = lines_.of[j], columns = lines_.columns(line), p = j - lines_.start[line];
    if (columns < 2) return;  // one column holds its entries whole already
    emit_tree(resized(gather_, columns), p, out);
    emit_line_multicast(columns, env_.geo.line_root(columns), p, env_.geo.across(), along_pattern_, entry_bytes_,
                        multicast_tag_, out);
  }
  void signature(bool, uint32_t, std::vector<uint64_t>&) const override {}  // GridAttention's covers it
  Front latency(const Front&, const IterationInputs&, uint64_t) const override {
    throw std::logic_error("the grid's KV move is timed by its grid attention step (arrivals)");
  }
  // When each column of a line of `columns`, ready at `ready`, has the row's whole entries.
  std::vector<Timed> arrivals(std::vector<Timed> ready) const {
    const uint32_t columns = uint32_t(ready.size());
    if (columns < 2) return ready;
    const Timed gathered = tree_time(resized(gather_, columns), ready);
    const uint32_t root = env_.geo.line_root(columns);
    for (uint32_t p = 0; p < columns; ++p)
      ready[p] = line_multicast_arrival(gathered, root, p, entry_bytes_, along_pattern_);
    return ready;
  }
  uint32_t patterns() const override { return 0; }  // the grid's routes
  uint16_t tags_used() const override { return uint16_t(multicast_tag_ + 1 - env_.tag); }
  void accept(StepVisitor&) const override {
    throw std::logic_error("the grid's KV move is checked through its grid attention step");
  }

 private:
  uint32_t tree_levels_of_widest() const {
    uint32_t levels = 0;
    for (uint32_t line = 0; line < lines_.count; ++line) levels = std::max(levels, tree_patterns(lines_.columns(line)));
    return levels;
  }

  KvGroups lines_;
  uint64_t entry_bytes_;
  uint32_t along_pattern_;
  Tree gather_;
  uint16_t multicast_tag_ = 0;
};

class GridAttention final : public GridAttentionStep {
 public:
  GridAttention(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes, std::optional<KvGroups> move_to,
                uint64_t prompt_positions)
      : GridAttentionStep(env, shape.n_kv_heads, shape.n_heads, shape.window, shape.sinks.flops > 0,
                          std::move(move_to)),
        shape_(shape),
        slice_bytes_(slice_bytes),
        prompt_positions_(prompt_positions) {
    if (shape.max_positions == 0)
      throw std::logic_error("grid attention sizes its score messages by the workload's largest context");
    const BlockGeometry& g = env.geo;
    q_per_kv_ = shape.n_heads / shape.n_kv_heads;
    query_heads_ = uint64_t(groups().heads_per_group) * q_per_kv_;
    // As the kernel's fixed score buffers: every row sends the scores of as
    // many positions as the fullest row holds at the workload's largest context.
    score_bytes_ = dtype_bytes(env.partial_sum, query_heads_ * ceil_div(shape.max_positions, g.rows));
    // The softmax's max and sum stay fp32, as the functional check computes them
    // (the kernel sends fp16; at its one head either is one 4-byte wavelet).
    statistic_bytes_ = dtype_bytes(Dtype::FP32, query_heads_);

    // Routes: the sum of the scores along a group's columns and their return
    // along it; the slices, maxima and sums down the columns; the three
    // column trees share one set of routes under tags of their own.
    uint32_t segment_patterns = 0;
    for (uint32_t group = 0; group < groups().count; ++group)
      segment_patterns = std::max(segment_patterns, tree_patterns(groups().columns(group)));
    const uint32_t column_patterns = tree_patterns(g.rows);
    segment_tree_.along_row = true;
    segment_tree_.pattern = 0;
    segment_tree_.bytes_per_position = score_bytes_;
    segment_tree_.sum = env.partial_sum;
    along_ = segment_patterns;
    down_ = along_ + (groups().widest > 1 ? 1 : 0);
    for (Tree* tree : {&max_tree_, &sum_tree_, &out_tree_}) {
      tree->along_row = false;
      tree->n = g.rows;
      tree->pattern = down_ + 1;
    }
    max_tree_.bytes_per_position = sum_tree_.bytes_per_position = statistic_bytes_;
    out_tree_.sum = env.partial_sum;  // bytes per column: out_tree()
    patterns_ = down_ + 1 + column_patterns;

    uint16_t next = uint16_t(env.tag);
    auto take = [&](uint32_t tags) {
      const uint16_t first = next;
      next = uint16_t(next + tags);
      return first;
    };
    segment_tree_.tag = take(segment_patterns);
    along_tag_ = take(1);
    slices_tag_ = take(1);
    max_tree_.tag = take(column_patterns);
    max_tag_ = take(1);
    sum_tree_.tag = take(column_patterns);
    sum_tag_ = take(1);
    out_tree_.tag = take(column_patterns);
    if (kv_move()) {
      StepEnv moved = env;
      moved.tokens = uint32_t(ceil_div(env.tokens, g.rows));
      moved.tag = next;
      // The largest part of an entry a column holds: the narrowest group's.
      uint32_t narrowest = groups().widest;
      for (uint32_t group = 0; group < groups().count; ++group)
        narrowest = std::min(narrowest, groups().columns(group));
      const uint64_t head_dims = uint64_t(groups().heads_per_group) * shape.head_dim;
      move_ =
          std::make_unique<RowKvMove>(moved, groups(), dtype_bytes(env.activation, 2 * ceil_div(head_dims, narrowest)),
                                      dtype_bytes(env.activation, 2 * head_dims), segment_tree_.pattern, along_);
      moved_entry_bytes_ = moved.tokens * dtype_bytes(env.activation, 2 * head_dims);
      take(move_->tags_used());
    }
    tags_used_ = uint16_t(next - env.tag);

    if (shape.sinks.flops > 0) {
      // Each column adds its group's sink terms to the sum, as it repeats the whole softmax.
      auto share = [&](uint64_t total) { return ceil_div(total * query_heads_, shape.n_heads); };
      sinks_ = Work{share(shape.sinks.flops), share(shape.sinks.read_bytes), share(shape.sinks.write_bytes)};
    }
  }

  FrontKind input() const override { return FrontKind::Row; }
  FrontKind output() const override { return FrontKind::Row; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    emit_slices(i, out);
    if (move_) move_->emit(i, j, out);
    emit_attention(i, j, out);
  }
  // The chunk's slices and attention scale by the chunk, the KV move by the entries a row moves.
  void emit_tokens(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (!move_) return Step::emit_tokens(i, j, out);
    size_t first = out.size();
    emit_slices(i, out);
    scale_to_tokens(out, first);
    move_->emit_tokens(i, j, out);
    first = out.size();
    emit_attention(i, j, out);
    scale_to_tokens(out, first);
  }
  void emit_slices(uint32_t i, std::vector<Task>& out) const {
    const BlockGeometry& g = env_.geo;
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), down_, slice_bytes_, slices_tag_, out);
  }
  void emit_attention(uint32_t i, uint32_t j, std::vector<Task>& out) const {
    const BlockGeometry& g = env_.geo;
    const uint32_t group = groups().of[j], columns = groups().columns(group), p = j - groups().start[group];
    const Costs costs = costs_of(j);
    auto down = [&](uint16_t tag, uint64_t bytes) {
      emit_line_multicast(g.rows, g.root_i(), i, g.down(), down_, bytes, tag, out);
    };
    out.push_back(positions_task(costs.score_fixed, costs.score));
    emit_tree(resized(segment_tree_, columns), p, out);
    emit_line_multicast(columns, g.line_root(columns), p, g.across(), along_, score_bytes_, along_tag_, out);
    out.push_back(positions_task({}, costs.max));
    emit_tree(max_tree_, i, out);
    down(max_tag_, statistic_bytes_);
    out.push_back(positions_task({}, costs.exp_sum));
    emit_tree(sum_tree_, i, out);
    if (i == g.root_i() && sinks_.flops > 0) out.push_back(compute().work(sinks_).dtype(env_.activation));
    down(sum_tag_, statistic_bytes_);
    out.push_back(positions_task(costs.out_fixed, costs.out));
    emit_tree(out_tree(j), i, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (row) {
      tree_signature(max_tree_, index, out);  // the three column trees share their shape
    } else {
      const uint32_t group = groups().of[index];
      out.push_back(groups().columns(group));
      out.push_back(index - groups().start[group]);
    }
  }

  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    const BlockGeometry& g = env_.geo;
    const uint64_t positions = attended(inputs.context(iteration));
    auto held = [&](uint32_t i) { return positions_held(positions, g.rows, i); };
    auto work = [&](const Work& fixed, const Work& per_position, uint32_t i) {
      return cycles(env_.activation, fixed + per_position * held(i));
    };
    auto down = [&](const Timed& from, uint32_t i, uint64_t bytes) {
      return line_multicast_arrival(from, g.root_i(), i, bytes, down_);
    };
    Front out{FrontKind::Row, {}, std::vector<Timed>(g.cols), {}};
    for (uint32_t group = 0; group < groups().count; ++group) {
      const uint32_t start = groups().start[group], columns = groups().columns(group);
      // scored[p][i]: tile (i, start + p) holds the summed scores of its positions.
      std::vector<std::vector<Timed>> scored(columns, std::vector<Timed>(g.rows));
      for (uint32_t p = 0; p < columns; ++p)
        for (uint32_t i = 0; i < g.rows; ++i) scored[p][i] = down(in.at[start + p], i, slice_bytes_);
      if (move_) {  // each row's KV move, once its slices are down
        std::vector<Timed> row(columns);
        for (uint32_t i = 0; i < g.rows; ++i) {
          for (uint32_t p = 0; p < columns; ++p) row[p] = scored[p][i];
          row = move_->arrivals(std::move(row));
          for (uint32_t p = 0; p < columns; ++p) scored[p][i] = row[p];
        }
      }
      for (uint32_t p = 0; p < columns; ++p) {
        const Costs costs = costs_of(start + p);
        for (uint32_t i = 0; i < g.rows; ++i)
          scored[p][i] = scored[p][i].after(work(costs.score_fixed, costs.score, i), Category::Compute);
      }
      const Tree segment = resized(segment_tree_, columns);
      std::vector<Timed> row(columns);
      for (uint32_t i = 0; i < g.rows; ++i) {
        for (uint32_t p = 0; p < columns; ++p) row[p] = scored[p][i];
        const Timed summed = tree_time(segment, row);
        for (uint32_t p = 0; p < columns; ++p)
          scored[p][i] = line_multicast_arrival(summed, g.line_root(columns), p, score_bytes_, along_);
      }
      for (uint32_t p = 0; p < columns; ++p) {
        const Costs costs = costs_of(start + p);
        std::vector<Timed>& column = scored[p];
        for (uint32_t i = 0; i < g.rows; ++i) column[i] = column[i].after(work({}, costs.max, i), Category::Compute);
        const Timed top = tree_time(max_tree_, column);
        for (uint32_t i = 0; i < g.rows; ++i)
          column[i] = down(top, i, statistic_bytes_).after(work({}, costs.exp_sum, i), Category::Compute);
        Timed total = tree_time(sum_tree_, column);
        if (sinks_.flops > 0) total = total.after(cycles(env_.activation, sinks_), Category::Compute);
        for (uint32_t i = 0; i < g.rows; ++i)
          column[i] = down(total, i, statistic_bytes_).after(work(costs.out_fixed, costs.out, i), Category::Compute);
        out.at[start + p] = tree_time(out_tree(start + p), column);
      }
    }
    return out;
  }

  bool has_kv_offset() const override { return true; }
  uint32_t kv_offset(uint32_t i, uint32_t) const override { return i; }
  // With the KV move: the grid's entries of the longest prompt beside decode's cache at `context`.
  uint64_t kv_bytes(uint32_t i, uint32_t j, uint64_t context) const override {
    if (!kv_move()) return positions_held(attended(context), env_.geo.rows, i) * kv_bytes_per_position(j);
    const KvGroups& decode = *kv_move();
    const uint32_t group = decode.of[j];
    const uint32_t offset = (j - decode.start[group]) * env_.geo.rows + i;
    return positions_held(attended(prompt_positions_), env_.geo.rows, i) * kv_bytes_per_position(j) +
           positions_held(attended(context), decode.columns(group) * env_.geo.rows, offset) *
               dtype_bytes(shape_.kv, 2ull * decode.heads_per_group * shape_.head_dim);
  }
  uint64_t total_kv_bytes(uint64_t context) const override {
    const uint64_t entry = dtype_bytes(shape_.kv, 2ull * groups().heads_per_group * shape_.head_dim);
    if (!kv_move()) return uint64_t(groups().count) * attended(context) * entry;
    return uint64_t(groups().count) * attended(prompt_positions_) * entry +
           uint64_t(kv_move()->count) * attended(context) *
               dtype_bytes(shape_.kv, 2ull * kv_move()->heads_per_group * shape_.head_dim);
  }
  uint64_t activation_bytes(uint32_t, uint32_t j) const override {
    // The chunk's q/k/v slices and output partials; the partial and the summed
    // scores of the token in hand; with the KV move, the whole entries a row moves.
    return for_tokens(slice_bytes_ + dtype_bytes(env_.partial_sum, q_per_kv_ * dims(j))) + 2 * score_bytes_ +
           moved_entry_bytes_;
  }
  uint64_t max_context(uint32_t i, uint32_t j, uint64_t free_bytes) const override {
    if (kv_move()) {
      // The prompt's grid entries are held whatever the context; decode's share grows with it.
      const uint64_t prompt = positions_held(attended(prompt_positions_), env_.geo.rows, i) * kv_bytes_per_position(j);
      if (free_bytes < prompt) return 0;
      const KvGroups& decode = *kv_move();
      const uint32_t group = decode.of[j];
      const uint32_t stride = decode.columns(group) * env_.geo.rows;
      const uint32_t offset = (j - decode.start[group]) * env_.geo.rows + i;
      return context_held(free_bytes - prompt, dtype_bytes(shape_.kv, 2ull * decode.heads_per_group * shape_.head_dim),
                          offset, stride);
    }
    // A group wider than its head dimensions leaves its last columns without any: they keep no KV entries.
    if (dims(j) == 0) return UINT64_MAX;
    return context_held(free_bytes, kv_bytes_per_position(j), i, env_.geo.rows);
  }
  uint32_t patterns() const override { return patterns_; }
  uint16_t tags_used() const override { return tags_used_; }

 private:
  // Per position a tile of column j holds (and fixed).
  struct Costs {
    Work score_fixed, score, max, exp_sum, out_fixed, out;
  };
  // Head dimensions column j holds of its group's KV heads (of q, k and v
  // alike): the group's dimensions cut into near-equal runs, one per column.
  uint64_t dims(uint32_t j) const {
    const uint32_t group = groups().of[j], columns = groups().columns(group), p = j - groups().start[group];
    const uint64_t total = uint64_t(groups().heads_per_group) * shape_.head_dim;
    return total / columns + (p < total % columns ? 1 : 0);
  }
  uint64_t kv_bytes_per_position(uint32_t j) const { return dtype_bytes(shape_.kv, 2 * dims(j)); }
  Costs costs_of(uint32_t j) const {
    const uint64_t d = dims(j), dot = workloads::ElementwiseFlops::kMultiplyAdd * q_per_kv_ * d;
    const uint64_t scores = dtype_bytes(env_.partial_sum, query_heads_);
    Costs c;
    // q.k over the column's dimensions; the softmax (max; subtract, exp, sum;
    // divide) is repeated by every column of the group, as in the kernel; p.v
    // over the column's dimensions.
    // The two products issue their vector instructions as the kernel's
    // vecmat_computation does (Decode/WSE-2/src/decode.csl): one @fmach per
    // element of the left vector over the whole right-hand run: for the
    // scores one per dimension over the tile's positions, for the output one
    // per position over its dimensions, for each query head. The softmax's
    // instructions are not counted.
    const uint64_t out_instructions = d == 0 ? 0 : q_per_kv_;  // a column without dimensions has no output
    c.score_fixed = Work{0, slice_bytes_, 0, q_per_kv_ * d};
    c.score = Work{dot, dtype_bytes(shape_.kv, d), scores};
    c.max = Work{query_heads_, scores, 0};
    c.exp_sum = Work{3 * query_heads_, scores, scores};
    c.out_fixed = Work{0, 0, dtype_bytes(env_.partial_sum, q_per_kv_ * d)};
    c.out = Work{query_heads_ + dot, dtype_bytes(shape_.kv, d) + scores, 0, out_instructions};
    return c;
  }
  Task positions_task(const Work& fixed, const Work& per_position) const {
    return kv_compute(fixed, per_position, env_.geo.rows, shape_.window);
  }
  Tree out_tree(uint32_t j) const {
    Tree tree = out_tree_;
    tree.bytes_per_position = dtype_bytes(env_.partial_sum, q_per_kv_ * dims(j));
    return tree;
  }

  AttentionShape shape_;
  uint64_t slice_bytes_ = 0, score_bytes_ = 0, statistic_bytes_ = 0;
  uint64_t prompt_positions_ = 0;    // with the KV move: the longest prompt, whose grid entries the prefill keeps
  uint64_t moved_entry_bytes_ = 0;   // with the KV move: the whole entries a row moves, as its tiles receive them
  std::unique_ptr<RowKvMove> move_;  // with the KV move
  uint64_t q_per_kv_ = 1, query_heads_ = 1;
  Work sinks_;
  uint32_t along_ = 0, down_ = 0, patterns_ = 0;
  uint16_t along_tag_ = 0, slices_tag_ = 0, max_tag_ = 0, sum_tag_ = 0, tags_used_ = 0;
  Tree segment_tree_, max_tree_, sum_tree_, out_tree_;
};

}  // namespace

std::unique_ptr<Step> grid_attention_step(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes,
                                          std::optional<KvGroups> kv_move, uint64_t prompt_positions) {
  return std::make_unique<GridAttention>(env, shape, slice_bytes, std::move(kv_move), prompt_positions);
}

}  // namespace wafersim::mapping
