#pragma once
// The steps a block of tiles runs for one token. Each has a timing face whose
// two halves must agree: emit() writes the tile programs the engine runs, and
// latency() gives the same timing in closed form (contention-free) for the
// analytic model; an SRAM face (StepSram, step_sram.h); and a kind, which the
// functional check visits (step_visitor.h, docs/ARCHITECTURE.md "Adding a step").
//
// Between steps the data sits at the block root (Front::Root), on the root
// column as slices (Front::Column, one time per row) or on the root row
// (Front::Row, one time per column). A step's tiles are idle when its data
// arrives, so fronts carry everything the closed forms need.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "mapping/block.h"
#include "mapping/kv_groups.h"
#include "mapping/line_tree.h"
#include "mapping/step_sram.h"
#include "mapping/step_visitor.h"
#include "mapping/timed.h"
#include "models/hardware.h"
#include "models/task_builders.h"
#include "models/tile_program.h"

namespace wafersim::mapping {

enum class FrontKind : uint8_t { Root, Column, Row };

struct Front {
  FrontKind kind = FrontKind::Root;
  Timed root;             // Root: when the root holds the vector
  std::vector<Timed> at;  // Column: per row i; Row: per column j
  // A gather down the root column (Column to Root) also says when each of the
  // column's tiles was done with it: what the slices hand-off needs to know of
  // a region whose tiles take the next iteration's slices (docs/MAPPING.md).
  std::vector<Timed> line_done;

  const Timed& latest() const;  // when the last part of the data is ready
  static Front at_root(const Timed& when) {
    Front front;
    front.kind = FrontKind::Root;
    front.root = when;
    return front;
  }
};

struct StepEnv {
  const char* label = "";  // what the step computes, for reports ("qkv_proj", "attention")
  TileParams tile;         // copies: a step outlives the compiler's working state
  FabricParams fabric;
  BlockGeometry geo;
  uint32_t fanin = 2;         // fan-in trees (ktree_levels == 0), run store-and-forward
  uint32_t ktree_levels = 0;  // > 0: trees are K-trees of this many levels of chains, streamed
  uint16_t tag = 0;           // first tag of this step
  uint32_t colors_available = 0;
  uint16_t layer = 0;  // for statistics
  Dtype activation = Dtype::BF16;
  Dtype partial_sum = Dtype::FP32;           // of GEMV partial sums (mapping.partial_sum_dtype)
  uint64_t stream_buffer_bytes = 0;          // SRAM a tile keeps for data streaming through it
  uint32_t vector_instruction_elements = 0;  // mapping.vector_instruction_elements
  // Tokens one iteration carries through the step: 1 in decode, the chunk in a
  // prefill. Every task's work and every message's bytes are that many times
  // one token's, in the programs and in the closed form alike (steps_base.cpp).
  uint32_t tokens = 1;
};

// The environment of a step whose programs carry the whole chunk already
// (its own bytes and work are the chunk's), so that Step::emit_tokens does
// not scale them again.
inline StepEnv whole_chunk(StepEnv env) {
  env.tokens = 1;
  return env;
}

// A step's timing face; its SRAM face is StepSram's (step_sram.h).
class Step : public StepSram {
 public:
  explicit Step(const StepEnv& env) : env_(env) {}

  const char* label() const { return env_.label; }
  // emit() for the iteration's tokens: work and message bytes times StepEnv::tokens.
  virtual void emit_tokens(uint32_t i, uint32_t j, std::vector<Task>& out) const;
  virtual FrontKind input() const = 0;
  virtual FrontKind output() const = 0;
  // Appends the tasks tile (i, j) runs in this step.
  virtual void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const = 0;
  // Appends what emit() reads from row i (row = true) or column j: tiles whose
  // row and column signatures match run the same program.
  virtual void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const = 0;
  // For a step whose tiles' tasks depend on their row and column together,
  // beyond what the signatures say: per tile (i * cols + j), a class; tiles
  // whose classes and signatures all match run the same program. Null: none.
  virtual const std::vector<uint32_t>* tile_classes() const { return nullptr; }
  // Contention-free timing: the front after the step, given the front before.
  virtual Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const = 0;
  // The same when the root column's tiles may still be busy with the previous
  // iteration until `line_free` (the slices hand-off, Region::run): a step
  // that uses one of them before the data first reaches the column waits for it.
  virtual Front latency_after(const Front& in, const IterationInputs& inputs, uint64_t iteration,
                              const std::vector<Timed>& /*line_free*/) const {
    return latency(in, inputs, iteration);
  }

  // Where, among `contexts` (sorted, without repeats), the step's output from
  // `in` can change: the first context and each whose output may differ from
  // the one before. None: not known (a span table finds them by bisection).
  virtual std::optional<std::vector<uint64_t>> context_starts(const Front& /*in*/,
                                                              const std::vector<uint64_t>& /*contexts*/) const {
    return std::nullopt;
  }

  // Routing patterns (multicasts, tree levels) the step needs at its busiest
  // router; patterns past the preset's colour budget go through a relay.
  virtual uint32_t patterns() const = 0;
  uint32_t relayed_patterns() const;
  virtual uint16_t tags_used() const = 0;
  // What the step computes, for the functional check: each kind calls its own case.
  virtual void accept(StepVisitor& visitor) const = 0;
  // The environment the step was built in.
  const StepEnv& env() const { return env_; }
  // The shape of the step's trees over a line of n positions (mapping.reduction).
  TreeShape tree_shape(uint32_t n) const;
  // The root row's index (row = true) or the root column's: what signature(row, index) compares with.
  uint32_t root_index(bool row) const { return row ? env_.geo.root_i() : env_.geo.root_j(); }

 protected:
  uint32_t relays(uint32_t pattern) const { return pattern >= env_.colors_available ? 1 : 0; }
  // Closed-form costs of one token's work or message, for the iteration's tokens.
  uint64_t line_message_cycles(uint32_t hops, uint64_t bytes, uint32_t pattern) const;
  uint64_t message_cycles_for_tokens(uint32_t hops, uint32_t turns, uint32_t relays, uint64_t bytes) const;
  uint64_t cycles(Dtype dtype, const Work& work) const;
  // SRAM for data held once per token of the iteration (StepSram::activation_bytes).
  uint64_t for_tokens(uint64_t bytes_per_token) const { return bytes_per_token * env_.tokens; }
  // The tasks out[first...] emit() wrote for one token, made the iteration's tokens'.
  void scale_to_tokens(std::vector<Task>& out, size_t first) const;

  // Task builders with the step's layer set; a message also gets the relays
  // its routing pattern needs, and a local send the offset to the tile di rows
  // and dj columns away in the block.
  ComputeTask compute() const { return ComputeTask().layer(env_.layer); }
  WaitTask wait() const { return WaitTask().layer(env_.layer); }
  MulticastTask multicast(uint32_t pattern) const;
  SendTask send_local(int32_t di, int32_t dj, uint32_t pattern) const;

  // A tree along the root row (along_row = true: positions are columns j) or
  // the root column (positions are rows i), payload by subtree, first pattern
  // and tag of its level 0; `elem_bytes` sizes the combine work.
  struct Tree {
    bool along_row = true;
    uint32_t n = 1;
    uint16_t tag = 0;
    uint32_t pattern = 0;
    bool gather = false;              // payload grows with the subtree (else constant)
    uint64_t bytes_per_position = 0;  // gather: per position; reduce: the whole payload
    Dtype sum = Dtype::FP32;          // a reduction's elements: what is sent and added
    std::vector<uint32_t> group;      // optional: gather payload counts distinct groups, not positions
  };
  // The routing patterns a tree over n positions takes (two per level of
  // chains: neighbours alternate colours so a router never both receives and
  // forwards one colour; twice that with a middle root, one set per side) and
  // its levels (one tag each).
  uint32_t tree_patterns(uint32_t n) const;
  uint32_t side_patterns(uint32_t n) const;  // of one side of the root: all of them with a root at 0
  uint32_t tree_level_count(uint32_t n) const;
  // The routing pattern of the message the node at `position` sends at `level` to its parent `distance` away.
  uint32_t tree_pattern(const Tree& tree, uint32_t level, uint32_t position, uint32_t distance) const;
  // A multicast of `bytes` from the root of a line of n tiles along `dir` (both ways from a middle root), as
  // tile `position` of the line runs it: the root sends, the others wait for it.
  // `root` is where the line's data sits: geo.line_root(n) unless the step says otherwise.
  void emit_line_multicast(uint32_t n, uint32_t root, uint32_t position, Dir dir, uint32_t pattern, uint64_t bytes,
                           uint16_t tag, std::vector<Task>& out) const;
  // When that multicast reaches `position`, if the root sent it at `from`.
  Timed line_multicast_arrival(const Timed& from, uint32_t root, uint32_t position, uint64_t bytes,
                               uint32_t pattern) const;
  // The role of `position` in a tree over the tree's line.
  const LineRole& tree_role_at(const Tree& tree, uint32_t position) const {
    return line_tree(tree.n, env_.geo.line_root(tree.n), tree_shape(tree.n)).roles[position];
  }
  uint64_t tree_payload(const Tree& tree, uint32_t start, uint32_t size) const;
  Work combine_work(const Tree& tree, uint64_t received_bytes) const;
  void emit_tree(const Tree& tree, uint32_t position, std::vector<Task>& out) const;
  void tree_signature(const Tree& tree, uint32_t position, std::vector<uint64_t>& out) const;
  // `done` (optional): when each position's tile has finished its part of the tree.
  // `heads` (optional): when the root had its children's heads (stream_tree_completion); the result in a
  // tree run store-and-forward.
  Timed tree_time(const Tree& tree, std::vector<Timed> ready, std::vector<Timed>* done = nullptr,
                  Timed* heads = nullptr) const;
  // The same tree over n positions (e.g. along one KV-head group's columns).
  static Tree resized(const Tree& tree, uint32_t n) {
    Tree out = tree;
    out.n = n;
    return out;
  }
  // Attention work: `fixed` plus `per_position` for each KV position the tile
  // holds (positions p with p % kv_stride == the tile's kv_offset, at most the
  // window's when `window` is not 0).
  Task kv_compute(const Work& fixed, const Work& per_position, uint32_t kv_stride, uint32_t window) const {
    return compute()
        .work(fixed)
        .dtype(env_.activation)
        .work_per_position(per_position)
        .kv_stride(kv_stride)
        .kv_offset(Task::kTileParam)
        .kv_window(window);
  }

  StepEnv env_;
};

// --- the step kinds (step_visitor.h) ------------------------------------------
// What each kind computes, as the functional check reads it: the line its
// data sits on and the trees that combine it. The label (StepEnv) says which
// operation of the model it is; the partitions follow from the geometry
// (docs/VALIDATION.md, "Numbers"). Timing never reads these.

// On the block root.
class RootComputeStep : public Step {
 public:
  using Step::Step;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// The embedding row of the token to the root.
class LookupStep : public Step {
 public:
  using Step::Step;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// Input at the root or on the root row, fp32 sums reduced along each row.
class GemvToColumnStep : public Step {
 public:
  GemvToColumnStep(const StepEnv& env, bool input_on_row) : Step(env), input_on_row_(input_on_row) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  // x already on the root row (no multicast from the root).
  bool input_on_row() const { return input_on_row_; }

 private:
  bool input_on_row_;
};

// Input on the root column, fp32 sums reduced down each column.
class GemvToRowStep : public Step {
 public:
  using Step::Step;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// A step on the root column's slices, or along_row the root row's.
class LineStep : public Step {
 public:
  LineStep(const StepEnv& env, bool along_row) : Step(env), along_row_(along_row) {}
  bool along_row() const { return along_row_; }

 private:
  bool along_row_;
};

// Element-wise on the line's slices.
class LineComputeStep : public LineStep {
 public:
  using LineStep::LineStep;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// The root to every tile of the line.
class BroadcastStep : public LineStep {
 public:
  using LineStep::LineStep;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// The line's slices to the root, concatenated or (reduce) combined to one payload.
class GatherStep : public LineStep {
 public:
  GatherStep(const StepEnv& env, bool along_row, bool reduce) : LineStep(env, along_row), reduce_(reduce) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  bool reduce() const { return reduce_; }
  // When the root had every stream's head (latency()'s root: that, then the
  // wait for their tails): what a closed form that takes a front apart needs
  // of the root's time besides the time itself (mapping/routed_passes.h).
  virtual Timed heads_at_root(const Front& in) const = 0;

 private:
  bool reduce_;
};

// What both attention layouts share: KV heads own groups of columns (kv_groups.h).
class KvGroupAttention : public Step {
 public:
  KvGroupAttention(const StepEnv& env, uint32_t kv_heads, uint32_t query_heads, uint32_t kv_copies, uint32_t window,
                   bool sinks)
      : Step(env), groups_(kv_heads, query_heads, env.geo.cols, kv_copies), window_(window), sinks_(sinks) {}
  // The attention groups of the block's columns.
  const KvGroups& groups() const { return groups_; }
  // First column of each KV-head group, then the column count.
  const std::vector<uint32_t>& group_start() const { return groups_.start; }
  uint32_t window() const { return window_; }  // positions attended (0 = all)
  bool sinks() const { return sinks_; }        // sink logits join where the partials are combined

 protected:
  // Positions attended at `context`: the window's last, or all of them.
  uint64_t attended(uint64_t context) const { return window_ > 0 ? std::min<uint64_t>(context, window_) : context; }
  // The largest context whose positions offset, offset + stride, ... (of
  // `entry` bytes each) a tile holds in `free_bytes`: the (positions + 1)-th
  // arrives at context offset + positions * stride + 1; unbounded when the
  // window never outgrows them.
  uint64_t context_held(uint64_t free_bytes, uint64_t entry, uint32_t offset, uint32_t stride) const {
    const uint64_t positions = free_bytes / entry;
    if (window_ > 0 && positions_held(window_, stride, offset) <= positions) return UINT64_MAX;
    return uint64_t(offset) + positions * stride;
  }

 private:
  KvGroups groups_;
  uint32_t window_;
  bool sinks_;
};

// Per KV-head group of columns, flash-decoding partials reduced.
class AttentionStep : public KvGroupAttention {
 public:
  AttentionStep(const StepEnv& env, uint32_t kv_heads, uint32_t query_heads, uint32_t kv_copies, uint32_t window,
                bool sinks, bool row_io)
      : KvGroupAttention(env, kv_heads, query_heads, kv_copies, window, sinks), row_io_(row_io) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  // q/k/v in and the output out as slices on the root row (else root to root).
  bool row_io() const { return row_io_; }

 private:
  bool row_io_;
};

// --- the steps ---------------------------------------------------------------

// Compute on the block root only (norms, residual adds, sampling). Parameters
// the step uses (norm weights) are stored as slices along the root row.
std::unique_ptr<Step> root_compute_step(const StepEnv& env, const Work& work, Dtype dtype, Category category,
                                        uint64_t row_weight_elements = 0, Dtype weight = Dtype::BF16);

// y = W x with x at the root (or, with input_tag, already multicast along the
// root row by someone else), W cut in rows x cols blocks: x travels along the
// root row, each column's slice down its column, partial sums reduce along each
// row to the root column. Output: slice i of y on tile (i, 0).
// The tiles holding the bias slices (the root column) add them to their own
// partial sums.
struct GemvShape {
  uint64_t d_in = 0, d_out = 0;
  Dtype weight = Dtype::BF16;
  bool bias = false;  // d_out bias elements, stored with the output slices
  Dtype bias_dtype = Dtype::BF16;

  // GemvShape::matrix(d_in, d_out, weight_dtype).with_bias(present, dtype), so
  // a reader sees which number is which; the bias dtype defaults to the weights'.
  static GemvShape matrix(uint64_t d_in, uint64_t d_out, Dtype weight) {
    GemvShape shape;
    shape.d_in = d_in;
    shape.d_out = d_out;
    shape.weight = weight;
    shape.bias_dtype = weight;
    return shape;
  }
  GemvShape with_bias(bool present, Dtype dtype) const {
    GemvShape shape = *this;
    shape.bias = present;
    shape.bias_dtype = dtype;
    return shape;
  }

  // A matrix that stores fewer than d_in x d_out elements: the per-head
  // blocks of latent attention's absorbed products, or two factors applied
  // one after the other (W_O after W_UV). Its elements are spread evenly over
  // the block's tiles, each tile's share in proportion to its dense block.
  GemvShape with_stored(uint64_t elements) const {
    GemvShape shape = *this;
    shape.stored = elements;
    return shape;
  }
  // Weight elements of a tile whose dense block is rows x cols (rounded up).
  uint64_t block_weights(uint64_t rows, uint64_t cols) const {
    return stored == 0 ? rows * cols : (rows * cols * stored + d_in * d_out - 1) / (d_in * d_out);
  }

  // Vector (DSD) instructions of a tile's block of `in` inputs by `out`
  // outputs: one multiply-add per input over `elements` outputs at a time (0:
  // all of them, as one DSD can; WaferLLM's kernels take 16); a stored matrix
  // in proportion to its elements.
  uint64_t block_vector_instructions(uint64_t in, uint64_t out, uint64_t elements) const {
    const uint64_t dense = out == 0 ? 0 : in * (elements == 0 ? 1 : (out + elements - 1) / elements);
    return stored == 0 ? dense : (dense * stored + d_in * d_out - 1) / (d_in * d_out);
  }

  uint64_t weights() const { return stored == 0 ? d_in * d_out : stored; }
  uint64_t elements() const { return weights() + (bias ? d_out : 0); }
  uint64_t bytes() const { return dtype_bytes(weight, weights()) + (bias ? dtype_bytes(bias_dtype, d_out) : 0); }

 private:
  uint64_t stored = 0;  // 0: dense
};
std::unique_ptr<Step> gemv_to_column_step(const StepEnv& env, const GemvShape& shape, int32_t input_tag = -1);
// The same with x already spread as slices on the root row (Front::Row, slice
// j on tile (0, j)): each (0, j) multicasts its own slice down column j; no
// multicast along the root row.
std::unique_ptr<Step> gemv_row_to_column_step(const StepEnv& env, const GemvShape& shape);

// The transpose: x as slices on the root column, y as slices on the root row.
std::unique_ptr<Step> gemv_to_row_step(const StepEnv& env, const GemvShape& shape);

// Element-wise work on every root-column tile (e.g. SwiGLU of its slices), or
// with along_row on every root-row tile. Parameters the step uses (norm
// weights) may be stored as slices along that line.
std::unique_ptr<Step> column_compute_step(const StepEnv& env, const Work& work, Dtype dtype, bool along_row = false,
                                          uint64_t line_weight_elements = 0, Dtype weight = Dtype::BF16);

// column_compute_step on the root column that writes the residual stream,
// whose slice (`slice_bytes` per token) each root-column tile keeps for the
// rest of the chain (StepSram::kept_bytes).
std::unique_ptr<Step> stream_compute_step(const StepEnv& env, const Work& work, Dtype dtype, uint64_t slice_bytes);

// The root multicasts `bytes` down the root column (Front::Root to
// Front::Column): an input vector each tile keeps its slice of
// (`keep_bytes`), or a scalar every tile needs.
std::unique_ptr<Step> column_broadcast_step(const StepEnv& env, uint64_t bytes, uint64_t keep_bytes);
// The same along the root row (Front::Root to Front::Row), a payload every root-row tile keeps.
std::unique_ptr<Step> row_broadcast_step(const StepEnv& env, uint64_t bytes);

// Slices on the root column (or row) gathered to the root, concatenated; or,
// with reduce, combined to one payload of bytes_per_position (e.g. argmax).
std::unique_ptr<Step> gather_column_step(const StepEnv& env, uint64_t bytes_per_position, bool reduce = false);
std::unique_ptr<Step> gather_row_step(const StepEnv& env, uint64_t bytes_per_position, bool reduce = false);

// Decode attention over the KV cache spread across the block: KV heads own
// groups of columns, each tile of a group holds an even share of its positions
// (shift-balanced); q and the new K/V travel like a GEMV input, each tile scores
// its positions, partial softmax sums reduce down each column and along the
// root row back to the root.
struct AttentionShape {
  uint32_t n_heads = 0, n_kv_heads = 0, head_dim = 0;
  uint32_t window = 0;  // 0 = full context
  Dtype kv = Dtype::BF16;
  uint64_t flops_per_score = 0;  // per query head and position: q.k, softmax, p.v
  Work sinks;                    // at the root once the partials are combined (zero: no sink logits)
  // Positions attended at the workload's largest context (0: unknown). Below
  // the root row, a tile that holds none of them has nothing to score: it lets
  // q/k/v pass, and its tree messages are empty partials made as they are
  // sent, so it keeps no attention buffers (activation_bytes).
  uint64_t max_positions = 0;
  // Copies of each KV head's cache (row_attention_step only; kv_groups.h):
  // each attends with its own share of the head's query heads.
  uint32_t kv_copies = 1;
  // Widths per query head of its key (what a score multiplies) and its value,
  // and the elements one position of one KV head keeps: head_dim, head_dim and
  // 2 x head_dim; with latent attention (absorbed) the latent plus the rope
  // key, the latent, and the two as one entry (AttentionStep; grid attention
  // reads head_dim).
  uint32_t key_dim = 0, value_dim = 0, entry_dim = 0;
};
std::unique_ptr<Step> attention_step(const StepEnv& env, const AttentionShape& shape);
// The same between slices on the root row (Front::Row to Front::Row): each
// group gathers its q/k/v slices (`slice_bytes` per column) to its first
// column, which multicasts them along the group's columns; partials reduce down
// each column and then along the group's columns to its first column (sinks
// there), which multicasts the group's attention output along the group.
// With shape.kv_copies > 1 a group's gather brings its query heads only: the
// first copy's first column multicasts the key and value along all the copies.
std::unique_ptr<Step> row_attention_step(const StepEnv& env, const AttentionShape& shape, uint64_t slice_bytes);

// Embedding lookup: the root asks the far corner of the block for a row of the
// table and waits for it (the row's owner is data dependent; the far corner is
// the worst case). The table is spread evenly over the block.
std::unique_ptr<Step> lookup_step(const StepEnv& env, uint64_t table_elements, Dtype weight, uint64_t row_bytes);

}  // namespace wafersim::mapping
