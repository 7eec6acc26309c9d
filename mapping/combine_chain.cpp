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

// Per position p and column j (at p * columns + j, so that a token's few
// routed blocks read their rows straight through), with P(p) the latencies
// of the streams below p (a start at p reaches the top P(top) - P(p) later)
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
  std::vector<int64_t> fu, fr;    // f, its own expert unrouted / routed (or shared)
  std::vector<int64_t> gr, gs;    // g above s with its expert routed, and g at s
  std::vector<int64_t> mu;        // the latest unrouted g (above s) from p up to the top's child
  std::vector<int64_t> s2;        // the latest fu(k) + mu(k) from p up
  std::vector<uint32_t> first;    // the unrouted start latest from p up (ties: the highest)
  std::vector<int64_t> top_path;  // [j]: P(top)
};

CombineChain::CombineChain(std::vector<const ColumnCombine::Node*> bottom_up) : nodes_(std::move(bottom_up)) {
  if (nodes_.empty() || !nodes_.back()->top) throw std::logic_error("an MoE combining chain without its top");
  columns_ = nodes_.back()->arrival.size();
  for (const ColumnCombine::Node* node : nodes_)
    if (node->arrival.size() != columns_ || node->ready.size() != columns_)
      throw std::logic_error("an MoE combining chain's blocks with different columns");
  few_built_ = std::make_unique<std::once_flag[]>(nodes_.size() + 1);
  few_.resize(nodes_.size() + 1);
}

CombineChain::~CombineChain() = default;

const CombineChain::Tables* CombineChain::tables() const {
  std::call_once(built_, [this] {
    const size_t n = nodes_.size(), top = n - 1, columns = columns_;
    auto t = std::make_unique<Tables>();
    for (auto* v : {&t->fu, &t->fr, &t->gr, &t->gs, &t->mu, &t->s2}) v->assign(columns * n, kNone);
    t->first.assign(columns * n, 0);
    t->top_path.assign(columns, 0);
    const int64_t add = int64_t(kStreamAddCycles);
    for (size_t j = 0; j < columns; ++j) {
      int64_t path = 0;
      for (size_t p = 0; p < n; ++p) {
        const size_t at = p * columns + j;
        const ColumnCombine::Node& node = *nodes_[p];
        const int64_t arrival = int64_t(node.arrival[j].cycle), ready = int64_t(node.ready[j].cycle);
        if (ready <= arrival) return;  // a routed start could tie its unrouted one: the walk times this chain
        t->fu[at] = arrival - path;
        t->fr[at] = ready - path;
        if (p == top) break;
        const int64_t serialization = int64_t(node.serialization[j]), own = int64_t(node.add_cycles[j]);
        const int64_t ingest = p > 0 ? int64_t(nodes_[p - 1]->serialization[j]) : 0;
        // Unrouted above s: max(serialization, ingest) - K p, kept only as its suffix maxima (mu).
        t->mu[at] = std::max(serialization, ingest) - add * int64_t(p);
        t->gr[at] = std::max({serialization, own, ingest}) - add * int64_t(p);
        t->gs[at] = std::max(serialization, own) - add * int64_t(p);
        path += int64_t(node.latency[j]);
      }
      t->top_path[j] = path;
      t->first[top * columns + j] = uint32_t(top);
      for (size_t p = top; p-- > 0;) {
        const size_t at = p * columns + j, above = at + columns;
        t->mu[at] = std::max(t->mu[at], t->mu[above]);
        t->s2[at] = std::max(t->fu[at] + t->mu[at], t->s2[above]);
        const uint32_t first_above = t->first[above];
        t->first[at] = t->fu[at] > t->fu[first_above * columns + j] ? uint32_t(p) : first_above;
      }
    }
    tables_ = std::move(t);
  });
  return tables_.get();
}

std::vector<Timed> CombineChain::tops(const std::vector<uint32_t>& routed) const {
  std::vector<Timed> scratch;
  const std::vector<Timed>& out = tops(routed, scratch);
  if (&out == &scratch) return scratch;  // moved out
  return out;                            // a kept one, copied
}

const std::vector<Timed>& CombineChain::tops(const std::vector<uint32_t>& routed, std::vector<Timed>& scratch) const {
  if (routed.size() > 1 || (routed.size() == 1 && routed[0] >= nodes_.size())) {
    taken_apart_tops(routed, scratch);
    return scratch;
  }
  const size_t kept = routed.empty() ? nodes_.size() : routed[0];
  std::call_once(few_built_[kept], [&] { taken_apart_tops(routed, few_[kept]); });
  return few_[kept];
}

void CombineChain::taken_apart_tops(const std::vector<uint32_t>& routed, std::vector<Timed>& out) const {
  const Tables* t = tables();
  if (!t) {
    out = walked_tops(routed);
    return;
  }
  const size_t n = nodes_.size(), top = n - 1, columns = columns_;
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
  auto row = [&](const std::vector<int64_t>& table, size_t p) { return table.data() + p * columns; };

  // Every column at once, block by block, so that each reads rows straight through.
  thread_local std::vector<int64_t> scratch;
  thread_local std::vector<uint32_t> from_scratch;
  scratch.resize(4 * columns);
  from_scratch.resize(2 * columns);
  // Plain pointers: a thread_local's storage would be looked up again at every use.
  int64_t *latest = scratch.data(), *pairs = latest + columns, *routed_g = pairs + columns,
          *carried = routed_g + columns;
  uint32_t *from = from_scratch.data(), *from_routed = from + columns;
  std::fill(from_routed, from_routed + columns, 0);
  // The top's start: the latest carried-up start, the highest block's on a tie.
  const uint32_t* first = t->first.data() + s * columns;
  for (size_t j = 0; j < columns; ++j) {
    from[j] = first[j];
    latest[j] = t->fu[first[j] * columns + j];
  }
  for (uint32_t k : own) {
    const int64_t* fr = row(t->fr, k);
    for (size_t j = 0; j < columns; ++j)
      if (fr[j] > latest[j] || (fr[j] == latest[j] && k > from[j])) from[j] = k, latest[j] = fr[j], from_routed[j] = 1;
  }
  // The top's wait for the tail: the latest f(k) + g(k') over s <= k <= k' < top,
  // of unrouted pairs above s, pairs starting at s, pairs with a routed k, with a routed k'.
  if (below > 0) {
    const int64_t* s2 = row(t->s2, s + 1);
    for (size_t j = 0; j < columns; ++j) pairs[j] = s2[j], routed_g[j] = kNone;
    for (size_t l = below; l-- > 1;) {  // routed_g: the latest g(k') over the routed k' from own[l] up
      const int64_t *gr = row(t->gr, own[l]), *fr = row(t->fr, own[l]), *mu = row(t->mu, own[l]);
      for (size_t j = 0; j < columns; ++j) {
        routed_g[j] = std::max(routed_g[j], gr[j]);
        pairs[j] = std::max(pairs[j], fr[j] + std::max(mu[j], routed_g[j]));
      }
    }
    const int64_t *fr = row(t->fr, s), *gs = row(t->gs, s), *mu = row(t->mu, s + 1);
    for (size_t j = 0; j < columns; ++j) pairs[j] = std::max(pairs[j], fr[j] + std::max({gs[j], mu[j], routed_g[j]}));
    std::fill(carried, carried + columns, kNone);  // the latest unrouted f over (s, own[l]]
    for (size_t l = 1, p = s + 1; l < below; ++l) {
      for (; p <= own[l]; ++p) {
        const int64_t* fu = row(t->fu, p);
        for (size_t j = 0; j < columns; ++j) carried[j] = std::max(carried[j], fu[j]);
      }
      const int64_t* gr = row(t->gr, own[l]);
      for (size_t j = 0; j < columns; ++j) pairs[j] = std::max(pairs[j], carried[j] + gr[j]);
    }
  }
  const ColumnCombine::Node& head = *nodes_[top];
  const uint64_t* finish = (own_top ? head.finish_own_cycles : head.finish_passing_cycles).data();
  const uint64_t* ingest = below > 0 ? nodes_[top - 1]->serialization.data() : nullptr;
  const int64_t adds = int64_t(kStreamAddCycles) * int64_t(top);
  out.resize(columns);
  for (size_t j = 0; j < columns; ++j) {
    const int64_t start = latest[j] + t->top_path[j];
    int64_t done = start + int64_t(finish[j]);
    if (ingest) {
      const int64_t busy = std::max(int64_t(finish[j]), int64_t(ingest[j]));
      done = std::max(start + busy, pairs[j] + t->top_path[j] + adds);
    }
    const Timed& first_start = (from_routed[j] ? nodes_[from[j]]->ready : nodes_[from[j]]->arrival)[j];
    // Every cycle after the first block's start is the streams' latency or the top's wait for the tail.
    out[j] = first_start.after(uint64_t(done) - first_start.cycle, Category::Reduce);
  }
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
