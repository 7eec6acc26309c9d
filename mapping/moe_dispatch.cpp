// The MoE layer's dispatch step (moe_dispatch.h): programs and closed form.
#include "mapping/moe_dispatch.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "mapping/combine_chain.h"
#include "models/cost.h"

namespace wafersim::mapping {

namespace {

class Dispatch final : public DispatchStep {
 public:
  Dispatch(const StepEnv& env, std::vector<Task> head_sends, std::vector<Task> passing, std::vector<Expert> experts,
           uint32_t moe_layer, uint32_t results, const Work& combine, bool tree, uint64_t stream_bytes)
      : DispatchStep(env),
        head_sends_(std::move(head_sends)),
        passing_(std::move(passing)),
        experts_(std::move(experts)),
        moe_layer_(moe_layer),
        results_(results),
        combine_(combine),
        tree_(tree),
        stream_bytes_(stream_bytes) {}
  FrontKind input() const override { return FrontKind::Root; }
  FrontKind output() const override { return FrontKind::Root; }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    if (j != 0) return;
    if (i != 0) {
      out.insert(out.end(), passing_.begin(), passing_.end());
      return;
    }
    out.insert(out.end(), head_sends_.begin(), head_sends_.end());
    if (!tree_) {
      out.push_back(wait().tag(env_.tag).messages(results_));
      out.push_back(compute().work(combine_).dtype(env_.activation));
      return;
    }
    out.push_back(wait().tag(env_.tag).messages(1).heads_only(uint32_t(stream_bytes_)));
    out.push_back(compute().work(combine_).dtype(Dtype::FP32).category(Category::Reduce).after_streams());
  }
  void signature(bool, uint32_t index, std::vector<uint64_t>& out) const override { out.push_back(index == 0); }
  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    if (tree_) return tree_latency(in, inputs, iteration);
    Timed last = in.root;
    for (const Expert& expert : experts_)
      if (routed(expert, inputs, iteration)) last = later(last, in.root.then(expert.result));
    return Front::at_root(last.after(cycles(env_.activation, combine_), Category::Compute));
  }
  // Root: the dispatch's two multicasts. Tree: and two alternating colours for
  // each of the row chains and the column chain.
  uint32_t patterns() const override { return tree_ ? 6 : 2; }
  uint16_t tags_used() const override { return tree_ ? 2 : 1; }

 private:
  bool routed(const Expert& expert, const IterationInputs& inputs, uint64_t iteration) const {
    return expert.routed_index < 0 || inputs.expert_routed(iteration, moe_layer_, uint32_t(expert.routed_index));
  }
  // The programs' streams (build_moe), node by node from the last: a child
  // always comes after its parent. A node streams when its own expert is
  // routed (adding its result) or one of its children streams (passing the sum on).
  Front tree_latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const {
    const size_t n = experts_.size();
    std::vector<Timed> head(n);
    std::vector<uint64_t> tail(n, 0);
    std::vector<char> streams(n, 0);
    for (size_t k = n; k-- > 0;) {
      const Expert& node = experts_[k];
      const bool own = routed(node, inputs, iteration);
      Timed start = in.root.then(own ? node.ready : node.arrival);
      uint64_t inputs_tail = 0, ingest = 0;
      bool children = false;
      for (const int32_t child : {node.row_child, node.column_child}) {
        if (child < 0 || !streams[size_t(child)]) continue;
        const Expert& c = experts_[size_t(child)];
        start = later(start, head[size_t(child)].after(c.latency, Category::Reduce));
        inputs_tail = std::max(inputs_tail, tail[size_t(child)] + c.latency);
        ingest += c.serialization;
        children = true;
      }
      if (!own && !children) continue;
      streams[k] = 1;
      head[k] = start;
      tail[k] = stream_tail_departure(start.cycle, std::max({node.serialization, own ? node.add_cycles : 0, ingest}),
                                      inputs_tail);
    }
    if (n == 0 || !streams[0]) throw std::logic_error("an MoE layer's combining tree carries nothing to its root");
    const Expert& first = experts_[0];
    const Timed start = later(in.root, head[0].after(first.latency, Category::Reduce));
    const uint64_t done = stream_tail_departure(
        start.cycle, std::max(cycles(Dtype::FP32, combine_), first.serialization), tail[0] + first.latency);
    return Front::at_root(start.after(done - start.cycle, Category::Reduce));
  }

  std::vector<Task> head_sends_, passing_;
  std::vector<Expert> experts_;
  uint32_t moe_layer_, results_;
  Work combine_;
  bool tree_;
  uint64_t stream_bytes_;
};

// mapping.moe_combine: columns (ColumnCombine, moe_dispatch.h).
//
// Each chain's top streams the same way, relative to the dispatch, whenever
// the same of its blocks hold routed experts. Its times are spans from the
// dispatch (CombineChain, taken apart per block), and a token reads them
// shifted to its own dispatch: every time here is the dispatch's plus a
// span, and later() compares spans as it compares times.
class ColumnsDispatch final : public DispatchStep, public CombineParts {
 public:
  ColumnsDispatch(const StepEnv& env, ColumnCombine combine, uint32_t moe_layer)
      : DispatchStep(env), combine_(std::move(combine)), moe_layer_(moe_layer) {
    if (combine_.pieces.size() != env.geo.rows || combine_.sum.size() != env.geo.rows ||
        combine_.dispatch_done.size() != env.geo.rows || combine_.dispatch.size() != env.geo.tiles())
      throw std::logic_error("an MoE column combine for another block");
    find_chains();
    for (const Work& sum : combine_.sum) sum_cycles_.push_back(cycles(env_.activation, sum));
  }
  FrontKind input() const override { return FrontKind::Root; }
  FrontKind output() const override { return FrontKind::Column; }
  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const std::vector<Task>& dispatch = combine_.dispatch[uint64_t(i) * env_.geo.cols + j];
    out.insert(out.end(), dispatch.begin(), dispatch.end());
    if (j != 0 || combine_.pieces[i].empty()) return;
    out.push_back(wait().tag(env_.tag).messages(uint32_t(combine_.pieces[i].size())));
    out.push_back(compute().work(combine_.sum[i]).dtype(env_.activation).category(Category::Reduce));
  }
  // A root-column tile adds its row's pieces; a tile's part of the dispatch depends on its row and
  // column together (tile_classes), and most tiles' parts are the same.
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    if (row) out.push_back(index);
  }
  const std::vector<uint32_t>* tile_classes() const override { return &combine_.dispatch.ids(); }
  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    thread_local std::vector<std::vector<uint32_t>> keys;
    thread_local std::vector<uint32_t> positions;
    thread_local std::vector<std::vector<Timed>> scratch;
    thread_local std::vector<const std::vector<Timed>*> spans;
    chain_keys(inputs, iteration, keys);
    scratch.resize(chains_.size());
    spans.resize(chains_.size());
    for (size_t c = 0; c < chains_.size(); ++c) {
      chain_positions(keys[c], positions);
      spans[c] = &chain_times_[c]->tops(positions, scratch[c]);
    }
    // The rows are put together from the spans and shifted to the dispatch
    // once, rather than every chain's every column.
    Front out = assemble_parts(Timed{}, true, spans);
    for (Timed& at : out.at) at = in.root.then(at);
    return out;
  }
  size_t chains() const override { return chains_.size(); }
  void chain_keys(const IterationInputs& inputs, uint64_t iteration,
                  std::vector<std::vector<uint32_t>>& keys) const override {
    thread_local std::vector<uint32_t> routed;
    inputs.routed_experts(iteration, moe_layer_, uint32_t(nodes_of_expert_.size()), routed);
    keys.resize(chains_.size());
    for (std::vector<uint32_t>& key : keys) key.clear();
    for (uint32_t expert : routed)
      for (uint32_t k : nodes_of_expert_[expert]) keys[chain_of_[k]].push_back(k);
    for (std::vector<uint32_t>& key : keys) std::sort(key.begin(), key.end());
  }
  std::vector<Timed> chain_tops(size_t c, const std::vector<uint32_t>& key) const override {
    thread_local std::vector<uint32_t> positions;
    chain_positions(key, positions);
    return chain_times_[c]->tops(positions);
  }
  Front assemble(const Timed& dispatch, bool base, const std::vector<std::vector<Timed>>& tops) const override {
    thread_local std::vector<const std::vector<Timed>*> parts;
    parts.clear();
    for (const std::vector<Timed>& top : tops) parts.push_back(&top);
    return assemble_parts(dispatch, base, parts);
  }
  // The choice and the input's pieces, two alternating colours for the chains, one for the result's pieces.
  uint32_t patterns() const override { return 5; }
  uint16_t tags_used() const override { return 2; }

 private:
  // A chain's key as positions in the chain, from the bottom (ascending).
  void chain_positions(const std::vector<uint32_t>& key, std::vector<uint32_t>& positions) const {
    positions.clear();
    for (uint32_t k : key) positions.push_back(position_of_[k]);
    std::sort(positions.begin(), positions.end());
  }
  // assemble(), with chain c's tops at *tops[c].
  Front assemble_parts(const Timed& dispatch, bool base, const std::vector<const std::vector<Timed>*>& tops) const {
    Front out;
    out.kind = FrontKind::Column;
    out.at.resize(combine_.pieces.size());
    for (size_t i = 0; i < out.at.size(); ++i) {
      // The latest part, the first on a tie (as later() keeps it), found by
      // its cycle before its critical path is copied.
      const Timed* from = base ? &dispatch : nullptr;
      uint64_t delay = base ? combine_.dispatch_done[i] : 0;
      uint64_t latest = base ? add_cycles(dispatch.cycle, delay) : 0;
      for (const RowPiece& piece : row_pieces_[i]) {
        const std::vector<Timed>& top = *tops[piece.chain];
        if (top.empty()) continue;
        const uint64_t arrived = add_cycles(top[piece.column].cycle, piece.cycles);
        if (!from || arrived > latest) from = &top[piece.column], delay = piece.cycles, latest = arrived;
      }
      Timed at = from ? from->after(delay, Category::Fabric) : Timed{};
      if (from && !row_pieces_[i].empty()) at = at.after(sum_cycles_[i], Category::Reduce);
      out.at[i] = at;
    }
    return out;
  }
  // Each top and the blocks below it, in order; every block is in one chain,
  // and every piece of the result comes from a top.
  void find_chains() {
    const std::vector<ColumnCombine::Node>& nodes = combine_.nodes;
    chain_of_.assign(nodes.size(), UINT32_MAX);
    for (size_t top = 0; top < nodes.size(); ++top) {
      if (!nodes[top].top) continue;
      chains_.emplace_back();
      for (int32_t k = int32_t(top); k >= 0; k = nodes[size_t(k)].child) {
        if (chain_of_[size_t(k)] != UINT32_MAX) throw std::logic_error("two MoE combining chains share a block");
        chain_of_[size_t(k)] = uint32_t(chains_.size() - 1);
        chains_.back().push_back(size_t(k));
      }
    }
    for (size_t k = 0; k < nodes.size(); ++k)
      if (chain_of_[k] == UINT32_MAX) throw std::logic_error("an MoE block in no combining chain");
    position_of_.resize(nodes.size());
    for (const std::vector<size_t>& chain : chains_) {
      std::vector<const ColumnCombine::Node*> bottom_up;
      for (size_t m = chain.size(); m-- > 0;) {
        position_of_[chain[m]] = uint32_t(bottom_up.size());
        bottom_up.push_back(&nodes[chain[m]]);
      }
      chain_times_.push_back(std::make_unique<CombineChain>(std::move(bottom_up)));
    }
    for (const std::vector<ColumnCombine::Piece>& row : combine_.pieces) {
      row_pieces_.emplace_back();
      for (const ColumnCombine::Piece& piece : row) {
        if (!nodes[piece.node].top) throw std::logic_error("an MoE result piece from a block that streams on");
        row_pieces_.back().push_back({chain_of_[piece.node], piece.column, piece.cycles});
      }
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k].routed_index < 0) continue;
      const size_t expert = size_t(nodes[k].routed_index);
      if (nodes_of_expert_.size() <= expert) nodes_of_expert_.resize(expert + 1);
      nodes_of_expert_[expert].push_back(uint32_t(k));
    }
  }

  ColumnCombine combine_;
  uint32_t moe_layer_;
  std::vector<std::vector<size_t>> chains_;                 // [chain]: its top, then each block below
  std::vector<uint32_t> chain_of_;                          // [node]
  std::vector<uint32_t> position_of_;                       // [node]: in its chain, from the bottom
  std::vector<std::unique_ptr<CombineChain>> chain_times_;  // [chain]
  std::vector<uint64_t> sum_cycles_;                        // [root-column tile]: adding its pieces
  std::vector<std::vector<uint32_t>> nodes_of_expert_;      // [routed expert]: its blocks here
  // A piece of the result as a token reads it: from its chain's top (ColumnCombine::Piece names the block).
  struct RowPiece {
    uint32_t chain, column;
    uint64_t cycles;
  };
  std::vector<std::vector<RowPiece>> row_pieces_;  // [root-column tile]
};

}  // namespace

std::unique_ptr<Step> moe_columns_dispatch_step(const StepEnv& env, ColumnCombine combine, uint32_t moe_layer) {
  return std::make_unique<ColumnsDispatch>(env, std::move(combine), moe_layer);
}

std::unique_ptr<Step> moe_dispatch_step(const StepEnv& env, std::vector<Task> head_sends, std::vector<Task> passing,
                                        std::vector<DispatchStep::Expert> experts, uint32_t moe_layer, uint32_t results,
                                        const Work& combine, bool tree, uint64_t stream_bytes) {
  return std::make_unique<Dispatch>(env, std::move(head_sends), std::move(passing), std::move(experts), moe_layer,
                                    results, combine, tree, stream_bytes);
}

}  // namespace wafersim::mapping
