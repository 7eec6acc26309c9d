#include "mapping/combine_chain.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "models/cost.h"

namespace wafersim::mapping {

namespace {

// Below every term: cycles are far smaller than this in either direction.
constexpr int64_t kNone = std::numeric_limits<int64_t>::min() / 4;

}  // namespace

// Per column j and position p (at j * n + p), with P(p) the latencies of
// the streams below p (so a start at p reaches the top P(top) - P(p) later)
// and K the cycles of adding a stream's input (kStreamAddCycles):
//
//   top's start = P(top) + latest over streaming p of (start(p) - P(p))
//   top's wait  = P(top) + K (top) + latest over s <= k <= k' < top of f(k) + g(k')
//     f(k)  = start(k) - P(k)                   (k's start carried up)
//     g(k') = busy(k') - K k'                   (k' streams, then the adds above it)
//
// s, the lowest streaming block, streams its own result alone; every block
// above it also takes its child's stream (busy >= the child's serialization).
struct CombineChain::Tables {
  size_t n = 0;
  std::vector<int64_t> fu, fr;      // f, its own expert unrouted / routed (or shared)
  std::vector<int64_t> gu, gr, gs;  // g above s unrouted / routed, and g at s
  std::vector<int64_t> mu;          // latest gu from p up to the top's child
  std::vector<int64_t> s2;          // latest fu(k) + mu(k) from p up
  std::vector<uint32_t> first;      // the unrouted start latest from p up (ties: the highest)
  std::vector<int64_t> top_path;    // [j]: P(top)
};

CombineChain::CombineChain(std::vector<const ColumnCombine::Node*> bottom_up) : nodes_(std::move(bottom_up)) {
  if (nodes_.empty() || !nodes_.back()->top) throw std::logic_error("an MoE combining chain without its top");
  columns_ = nodes_.back()->arrival.size();
  for (const ColumnCombine::Node* node : nodes_)
    if (node->arrival.size() != columns_ || node->ready.size() != columns_)
      throw std::logic_error("an MoE combining chain's blocks with different columns");
}

CombineChain::~CombineChain() = default;

const CombineChain::Tables* CombineChain::tables() const {
  std::call_once(built_, [this] {
    const size_t n = nodes_.size(), top = n - 1;
    auto t = std::make_unique<Tables>();
    t->n = n;
    for (auto* v : {&t->fu, &t->fr, &t->gu, &t->gr, &t->gs, &t->mu, &t->s2}) v->assign(columns_ * n, kNone);
    t->first.assign(columns_ * n, 0);
    t->top_path.assign(columns_, 0);
    const int64_t add = int64_t(kStreamAddCycles);
    for (size_t j = 0; j < columns_; ++j) {
      const size_t at = j * n;
      int64_t path = 0;
      for (size_t p = 0; p < n; ++p) {
        const ColumnCombine::Node& node = *nodes_[p];
        const int64_t arrival = int64_t(node.arrival[j].cycle), ready = int64_t(node.ready[j].cycle);
        if (ready <= arrival) return;  // a routed start could tie its unrouted one: the walk times this chain
        t->fu[at + p] = arrival - path;
        t->fr[at + p] = ready - path;
        if (p == top) break;
        const int64_t serialization = int64_t(node.serialization[j]), own = int64_t(node.add_cycles[j]);
        const int64_t ingest = p > 0 ? int64_t(nodes_[p - 1]->serialization[j]) : 0;
        t->gu[at + p] = std::max(serialization, ingest) - add * int64_t(p);
        t->gr[at + p] = std::max({serialization, own, ingest}) - add * int64_t(p);
        t->gs[at + p] = std::max(serialization, own) - add * int64_t(p);
        path += int64_t(node.latency[j]);
      }
      t->top_path[j] = path;
      t->first[at + top] = uint32_t(top);
      for (size_t p = top; p-- > 0;) {
        t->mu[at + p] = std::max(t->gu[at + p], t->mu[at + p + 1]);
        t->s2[at + p] = std::max(t->fu[at + p] + t->mu[at + p], t->s2[at + p + 1]);
        const uint32_t above = t->first[at + p + 1];
        t->first[at + p] = t->fu[at + p] > t->fu[at + above] ? uint32_t(p) : above;
      }
    }
    tables_ = std::move(t);
  });
  return tables_.get();
}

std::vector<Timed> CombineChain::tops(const std::vector<uint32_t>& routed) const {
  const Tables* t = tables();
  if (!t) return walked_tops(routed);
  const size_t n = nodes_.size(), top = n - 1;
  thread_local std::vector<uint32_t> own;  // positions adding their own result, ascending
  own.clear();
  size_t next = 0;
  for (uint32_t p = 0; p < n; ++p) {
    while (next < routed.size() && routed[next] < p) ++next;
    if (nodes_[p]->routed_index < 0 || (next < routed.size() && routed[next] == p)) own.push_back(p);
  }
  const bool own_top = !own.empty() && own.back() == top;
  const size_t below = own.size() - (own_top ? 1 : 0);  // own[0, below): streaming blocks under the top
  const size_t s = below > 0 ? own[0] : top;
  const int64_t add = int64_t(kStreamAddCycles);
  std::vector<Timed> out(columns_);
  for (size_t j = 0; j < columns_; ++j) {
    const size_t at = j * n;
    const int64_t* fu = t->fu.data() + at;
    const int64_t* fr = t->fr.data() + at;
    // The top's start: the latest carried-up start, the highest block's on a tie.
    size_t from = t->first[at + s];
    int64_t latest = fu[from];
    bool from_routed = false;
    for (uint32_t k : own)
      if (fr[k] > latest || (fr[k] == latest && k > from)) from = k, latest = fr[k], from_routed = true;
    const int64_t start = latest + t->top_path[j];
    const ColumnCombine::Node& head = *nodes_[top];
    const int64_t finish = int64_t(own_top ? head.finish_own_cycles[j] : head.finish_passing_cycles[j]);
    int64_t done = start + finish;
    if (below > 0) {
      const int64_t* gr = t->gr.data() + at;
      const int64_t* mu = t->mu.data() + at;
      // The latest f(k) + g(k') over s <= k <= k' < top: unrouted pairs
      // above s, pairs starting at s, pairs with a routed k, with a routed k'.
      int64_t routed_g = kNone;  // latest g(k') over the routed k' above the current one
      int64_t pairs = t->s2[at + s + 1];
      for (size_t l = below; l-- > 1;) {
        const uint32_t k = own[l];
        routed_g = std::max(routed_g, gr[k]);
        pairs = std::max(pairs, fr[k] + std::max(mu[k], routed_g));
      }
      pairs = std::max(pairs, fr[s] + std::max({t->gs[at + s], mu[s + 1], routed_g}));
      int64_t carried = kNone;  // the latest unrouted f over (s, own[l]]
      for (size_t l = 1, p = s + 1; l < below; ++l) {
        for (; p <= own[l]; ++p) carried = std::max(carried, fu[p]);
        pairs = std::max(pairs, carried + gr[own[l]]);
      }
      const int64_t wait = pairs + t->top_path[j] + add * int64_t(top);
      const int64_t busy = std::max(finish, int64_t(nodes_[top - 1]->serialization[j]));
      done = std::max(start + busy, wait);
    }
    const Timed& first = (from_routed ? nodes_[from]->ready : nodes_[from]->arrival)[j];
    // Every cycle after the first block's start is the streams' latency or the top's wait for the tail.
    out[j] = first.after(uint64_t(done) - first.cycle, Category::Reduce);
  }
  return out;
}

std::vector<Timed> CombineChain::walked_tops(const std::vector<uint32_t>& routed) const {
  const size_t n = nodes_.size();
  // Per column, the block below's stream: its head's time, the block its
  // start comes from (and whether routed), its tail's time.
  std::vector<uint64_t> head(columns_), tail(columns_);
  std::vector<uint32_t> from(columns_);
  std::vector<char> from_routed(columns_);
  bool child = false;  // the block below streams
  for (uint32_t p = 0; p < n; ++p) {
    const ColumnCombine::Node& node = *nodes_[p];
    const bool own = node.routed_index < 0 || std::binary_search(routed.begin(), routed.end(), p);
    if (!node.top && !own && !child) continue;
    const ColumnCombine::Node* below = child ? nodes_[p - 1] : nullptr;
    for (size_t j = 0; j < columns_; ++j) {
      uint64_t start = (own ? node.ready : node.arrival)[j].cycle, inputs_tail = 0, ingest = 0;
      if (child) {
        const uint64_t passed = head[j] + below->latency[j];
        if (passed > start)  // the block's own start wins a tie, as `later` keeps it
          start = passed;
        else
          from[j] = p, from_routed[j] = own;
        inputs_tail = tail[j] + below->latency[j];
        ingest = below->serialization[j];
      } else {
        from[j] = p, from_routed[j] = own;
      }
      auto departure = [&](uint64_t busy) {  // stream_tail_departure, without its "no input" at cycle 0
        return child ? std::max(start + busy, inputs_tail + kStreamAddCycles) : start + busy;
      };
      if (node.top) {
        head[j] = departure(std::max(own ? node.finish_own_cycles[j] : node.finish_passing_cycles[j], ingest));
      } else {
        head[j] = start;
        tail[j] = departure(std::max({node.serialization[j], own ? node.add_cycles[j] : 0, ingest}));
      }
    }
    child = true;
  }
  std::vector<Timed> out(columns_);
  for (size_t j = 0; j < columns_; ++j) {
    const Timed& first = (from_routed[j] ? nodes_[from[j]]->ready : nodes_[from[j]]->arrival)[j];
    out[j] = first.after(head[j] - first.cycle, Category::Reduce);
  }
  return out;
}

}  // namespace wafersim::mapping
