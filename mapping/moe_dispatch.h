#pragma once
// The MoE layer's dispatch: the step kind and its factory (moe_dispatch.cpp).
#include <memory>
#include <vector>

#include "mapping/steps.h"
#include "mapping/task_lists.h"

namespace wafersim::mapping {

// Sends the vector to the routed experts' rows, waits for their results and
// combines them: all of them at the root (mapping.moe_combine: root), or the
// one sum the combining tree streams to it (tree). The expert blocks' own
// chains are the region's other blocks (build_moe, regions.cpp).
class DispatchStep : public Step {
 public:
  // One expert block, as the dispatch times it.
  struct Expert {
    int32_t routed_index;  // -1 for a shared expert
    Timed result;          // root: from dispatch to the result at the layer root, contention-free
    // tree: from dispatch to the vector at the block root, and to its own result there
    Timed arrival, ready;
    int32_t row_child = -1, column_child = -1;  // indices into the experts, -1 for none
    uint64_t latency = 0;                       // tree: its stream's head to its parent, contention-free
    uint64_t serialization = 0;                 // tree: of its stream
    uint64_t add_cycles = 0;                    // tree: adding its own result into the stream
  };

  using Step::Step;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// mapping.moe_combine: columns. The router's choice leaves the root along the
// root row and down every column; each main-block tile that holds a piece of
// the input an expert column needs (its row's slice, which the router's GEMV
// multicast along the row) sends it, once the choice has passed, to the first
// expert row on that column, whose tile multicasts the slice and the choice
// down the column, so every expert block's root row finds its input there. The
// experts' results stay as slices on their blocks' root rows. Each place of
// an expert row holds a chain of blocks, one per expert row, whose root-row
// tiles stream their slices' fp32 sums up to the chain's top block; its
// root-row tiles write the sums out as activations and send each piece to the
// layer's root-column tile holding those elements of the residual stream,
// which adds the pieces of every chain.
struct ColumnCombine {
  // One expert block, as the combine times it: per column j of its root row.
  struct Node {
    int32_t routed_index = -1;   // -1 for a shared expert
    int32_t child = -1;          // the block below it in its chain (index into nodes), -1 for none
    bool top = false;            // sends to the root column instead of streaming up
    std::vector<Timed> arrival;  // from dispatch to the input slice (and the choice) at (0, j)
    std::vector<Timed> ready;    // from dispatch to its own scaled slice at (0, j)
    // Not top: its stream to the block above, contention-free.
    std::vector<uint64_t> latency, serialization, add_cycles;
    // Top: writing out the sum, with its own slice added or without.
    std::vector<uint64_t> finish_own_cycles, finish_passing_cycles;
  };
  // A top node's piece of column j's sum for root-column tile i.
  struct Piece {
    uint32_t node, column;
    uint64_t cycles;  // contention-free, from the top tile to the root-column tile
  };
  std::vector<Node> nodes;                 // by expert, shared ones last
  std::vector<std::vector<Piece>> pieces;  // per root-column tile
  std::vector<uint64_t> dispatch_done;     // per root-column tile: from dispatch to the end of its part of it
  std::vector<Work> sum;                   // per root-column tile: adding its pieces, one token's
  // Per tile (i, j) of the main block, at i * columns + j: its part of the
  // dispatch (the choice and the input's pieces down the columns), one token's bytes.
  TaskLists dispatch;
};

// The columns combine taken apart, for a closed form that times a token's
// routing part by part (mapping/routed_passes.h). Row by row, the layer's
// output is the latest of a base part (each root-column tile's end of the
// dispatch) and one part per combining chain (its top's sums, each piece on
// its way), then each tile's adding of its pieces. A chain's part depends on
// the routing only through which of its blocks hold routed experts.
class CombineParts {
 public:
  virtual ~CombineParts() = default;
  virtual size_t chains() const = 0;
  // For each chain, its blocks holding an expert the iteration routes (ascending): the chain's key.
  virtual void chain_keys(const IterationInputs& inputs, uint64_t iteration,
                          std::vector<std::vector<uint32_t>>& keys) const = 0;
  // A chain's top per column with the blocks of `key` routed, as spans from the dispatch.
  virtual std::vector<Timed> chain_tops(size_t chain, const std::vector<uint32_t>& key) const = 0;
  // The layer's output from a dispatch at `dispatch`, with the base part or
  // without it, and chain c's part from its tops `tops[c]` (absolute; empty:
  // without it). A row no part reaches is left at cycle 0.
  virtual Front assemble(const Timed& dispatch, bool base, const std::vector<std::vector<Timed>>& tops) const = 0;
};

// The step is a CombineParts too.
std::unique_ptr<Step> moe_columns_dispatch_step(const StepEnv& env, ColumnCombine combine, uint32_t moe_layer);

// `head_sends` leave the root; `passing` are the tasks of the root column's
// other tiles (the waits of a dispatch multicast that passes them). Root:
// `results` messages and the root's `combine`. Tree: one stream of
// `stream_bytes` per token, written out as activations by `combine`.
std::unique_ptr<Step> moe_dispatch_step(const StepEnv& env, std::vector<Task> head_sends, std::vector<Task> passing,
                                        std::vector<DispatchStep::Expert> experts, uint32_t moe_layer, uint32_t results,
                                        const Work& combine, bool tree, uint64_t stream_bytes);

}  // namespace wafersim::mapping
