// The MoE layer's dispatch step (moe_dispatch.h): programs and closed form.
#include "mapping/moe_dispatch.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

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
class ColumnsDispatch final : public DispatchStep {
 public:
  ColumnsDispatch(const StepEnv& env, ColumnCombine combine, uint32_t moe_layer)
      : DispatchStep(env), combine_(std::move(combine)), moe_layer_(moe_layer) {
    if (combine_.pieces.size() != env.geo.rows || combine_.sum.size() != env.geo.rows ||
        combine_.dispatch_done.size() != env.geo.rows || combine_.dispatch.size() != env.geo.tiles())
      throw std::logic_error("an MoE column combine for another block");
    for (const ColumnCombine::Node& node : combine_.nodes) {
      first_column_.push_back(columns_);
      columns_ += node.arrival.size();
    }
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
  // A tile's part of the dispatch depends on its row and its column together: each is its own class.
  void signature(bool, uint32_t index, std::vector<uint64_t>& out) const override { out.push_back(index); }
  Front latency(const Front& in, const IterationInputs& inputs, uint64_t iteration) const override {
    const std::vector<ColumnCombine::Node>& nodes = combine_.nodes;
    const size_t n = nodes.size();
    // Per node and column j (at first_column_[node] + j): when its stream's
    // head leaves (a top: when its sum is written out) and when the tail does.
    // Only streaming nodes' entries are read, each after it is written, so the
    // arrays are kept between calls (a token of an MoE decode makes one call
    // per layer) rather than allocated and cleared each time.
    thread_local std::vector<Timed> head_at;
    thread_local std::vector<uint64_t> tail_at;
    if (head_at.size() < columns_) head_at.resize(columns_), tail_at.resize(columns_);
    auto head = [&](size_t k) { return head_at.begin() + std::ptrdiff_t(first_column_[k]); };
    auto tail = [&](size_t k) { return tail_at.begin() + std::ptrdiff_t(first_column_[k]); };
    std::vector<char> streams(n, 0);
    for (size_t k = n; k-- > 0;) {  // a child always comes after its parent
      const ColumnCombine::Node& node = nodes[k];
      const bool own =
          node.routed_index < 0 || inputs.expert_routed(iteration, moe_layer_, uint32_t(node.routed_index));
      const bool child = node.child >= 0 && streams[size_t(node.child)];
      if (!node.top && !own && !child) continue;
      streams[k] = 1;
      const size_t columns = node.arrival.size();
      for (size_t j = 0; j < columns; ++j) {
        Timed start = in.root.then(own ? node.ready[j] : node.arrival[j]);
        uint64_t inputs_tail = 0, ingest = 0;
        if (child) {
          const ColumnCombine::Node& below = nodes[size_t(node.child)];
          start = later(start, head(size_t(node.child))[j].after(below.latency[j], Category::Reduce));
          inputs_tail = tail(size_t(node.child))[j] + below.latency[j];
          ingest = below.serialization[j];
        }
        if (node.top) {
          const uint64_t busy = own ? node.finish_own_cycles[j] : node.finish_passing_cycles[j];
          const uint64_t done = stream_tail_departure(start.cycle, std::max(busy, ingest), inputs_tail);
          head(k)[j] = start.after(done - start.cycle, Category::Reduce);
          tail(k)[j] = 0;  // a top streams no further
        } else {
          head(k)[j] = start;
          tail(k)[j] = stream_tail_departure(
              start.cycle, std::max({node.serialization[j], own ? node.add_cycles[j] : 0, ingest}), inputs_tail);
        }
      }
    }
    Front out;
    out.kind = FrontKind::Column;
    out.at.resize(combine_.pieces.size());
    for (size_t i = 0; i < out.at.size(); ++i) {
      Timed at = in.root.after(combine_.dispatch_done[i], Category::Fabric);
      for (const ColumnCombine::Piece& piece : combine_.pieces[i])
        at = later(at, head(piece.node)[piece.column].after(piece.cycles, Category::Fabric));
      if (!combine_.pieces[i].empty()) at = at.after(cycles(env_.activation, combine_.sum[i]), Category::Reduce);
      out.at[i] = at;
    }
    return out;
  }
  // The choice and the input's pieces, two alternating colours for the chains, one for the result's pieces.
  uint32_t patterns() const override { return 5; }
  uint16_t tags_used() const override { return 2; }

 private:
  ColumnCombine combine_;
  uint32_t moe_layer_;
  std::vector<size_t> first_column_;  // [node]: where its columns start in a flat per-column array
  size_t columns_ = 0;                // over every node
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
