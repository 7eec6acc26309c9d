#include "mapping/region_spans.h"

#include <algorithm>
#include <stdexcept>

namespace wafersim::mapping {

namespace {

// One context for every iteration; never asked about routing (no routed experts).
class AtContext : public IterationInputs {
 public:
  explicit AtContext(uint64_t context) : context_(context) {}
  uint64_t context(uint64_t) const override { return context_; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override {
    throw std::logic_error("RegionSpans: a region with routed experts depends on more than the context");
  }

 private:
  uint64_t context_;
};

bool same(const Timed& a, const Timed& b) { return a.cycle == b.cycle && a.path == b.path; }
bool same(const std::vector<Timed>& a, const std::vector<Timed>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!same(a[k], b[k])) return false;
  return true;
}

}  // namespace

RegionSpan RegionSpan::shifted(const Timed& start) const {
  RegionSpan span = *this;
  span.out.root = start.then(out.root);
  for (Timed& t : span.out.at) t = start.then(t);
  for (Timed& t : span.line_done) t = start.then(t);
  return span;
}

bool RegionSpan::operator==(const RegionSpan& other) const {
  return out.kind == other.out.kind && same(out.root, other.out.root) && same(out.at, other.out.at) &&
         same(line_done, other.line_done);
}

RegionSpan RegionSpans::evaluate(const Region& region, const Timed& start, const IterationInputs& inputs,
                                 uint64_t iteration) {
  RegionSpan span;
  span.line_done.assign(region.line_tiles(), start);
  span.out = region.run(Front::at_root(start), region.head_steps(), region.blocks[0].steps.size(), inputs, iteration,
                        &span.line_done);
  return span;
}

bool RegionSpans::depends_on_context_only(const Region& region) {
  return region.kind != RegionKind::Moe && !region.waits_for_line();
}

RegionSpans::RegionSpans(const Region& region, const std::vector<uint64_t>& contexts)
    : region_(region), contexts_(contexts) {
  if (contexts.empty()) return;
  const RegionSpan first = evaluate(contexts.front());
  const RegionSpan last = contexts.size() > 1 ? evaluate(contexts.back()) : first;
  append(contexts.front(), first);
  if (contexts.size() > 1) fill(0, contexts.size() - 1, first, last);
}

RegionSpan RegionSpans::evaluate(uint64_t context) {
  ++evaluations_;
  return evaluate(region_, Timed{}, AtContext(context), 0);
}

// Pieces for contexts_[lo + 1 .. hi], given the spans at lo and hi.
void RegionSpans::fill(size_t lo, size_t hi, const RegionSpan& span_lo, const RegionSpan& span_hi) {
  if (span_lo == span_hi) return;  // constant on [lo, hi]: the piece at lo covers it
  if (hi == lo + 1) {
    append(contexts_[hi], span_hi);
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  const RegionSpan span_mid = evaluate(contexts_[mid]);
  fill(lo, mid, span_lo, span_mid);
  fill(mid, hi, span_mid, span_hi);
}

void RegionSpans::append(uint64_t first_context, const RegionSpan& span) {
  if (!pieces_.empty() && pieces_.back().second == span) return;
  pieces_.emplace_back(first_context, span);
}

const RegionSpan& RegionSpans::at(uint64_t context) const {
  auto after =
      std::upper_bound(pieces_.begin(), pieces_.end(), context,
                       [](uint64_t c, const std::pair<uint64_t, RegionSpan>& piece) { return c < piece.first; });
  if (after == pieces_.begin()) throw std::logic_error("RegionSpans: context below the first one visited");
  return std::prev(after)->second;
}

PlanSpans::PlanSpans(const Plan& plan, const IterationInputs& inputs) : of_(plan.regions.size(), nullptr) {
  const uint64_t iterations = plan.programs.iterations;
  contexts_.resize(iterations);
  for (uint64_t n = 0; n < iterations; ++n) contexts_[n] = inputs.context(n);
  std::sort(contexts_.begin(), contexts_.end());
  contexts_.erase(std::unique(contexts_.begin(), contexts_.end()), contexts_.end());
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const Region& region = plan.regions[r];
    if (!RegionSpans::depends_on_context_only(region)) continue;
    auto& table = by_class_[region.timing_class];
    if (!table) table = std::make_unique<RegionSpans>(region, contexts_);
    of_[r] = table.get();
  }
}

uint64_t PlanSpans::evaluations() const {
  uint64_t total = 0;
  for (const auto& [key, table] : by_class_) total += table->evaluations();
  return total;
}

}  // namespace wafersim::mapping
