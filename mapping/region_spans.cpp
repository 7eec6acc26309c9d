#include "mapping/region_spans.h"

#include <algorithm>
#include <set>

namespace wafersim::mapping {

RegionSpan RegionSpan::shifted(const Timed& start) const {
  RegionSpan span = *this;
  span.out.root = start.then(out.root);
  for (Timed& t : span.out.at) t = start.then(t);
  for (Timed& t : span.line_done) t = start.then(t);
  return span;
}

bool RegionSpan::operator==(const RegionSpan& other) const {
  return out.kind == other.out.kind && out.root == other.out.root && out.at == other.out.at &&
         line_done == other.line_done;
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
    : steps_(contexts, [&region](uint64_t context) { return evaluate(region, Timed{}, AtContext(context), 0); }) {}

PlanSpans::PlanSpans(const Plan& plan, const IterationInputs& inputs)
    : regions_(plan.regions), of_(plan.regions.size(), nullptr) {
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

bool PlanSpans::context_outside_tables() const {
  if (!context_outside_tables_) {
    // Once per region without a table, and once per table for the head steps of its regions (alike by class).
    std::set<const RegionSpans*> checked;
    bool reads = false;
    for (size_t r = 0; r < regions_.size() && !reads; ++r) {
      const Region& region = regions_[r];
      if (!of_[r])
        reads = region.reads_context(0, region.blocks[0].steps.size());
      else if (checked.insert(of_[r]).second)
        reads = region.reads_context(0, region.head_steps());
    }
    context_outside_tables_ = reads;
  }
  return *context_outside_tables_;
}

bool PlanSpans::alike(uint64_t context_a, uint64_t context_b) const {
  if (context_a == context_b) return true;
  if (context_outside_tables()) return false;
  for (const auto& [key, table] : by_class_)
    if (&table->at(context_a) != &table->at(context_b)) return false;  // one piece is one value
  return true;
}

uint64_t PlanSpans::evaluations() const {
  uint64_t total = 0;
  for (const auto& [key, table] : by_class_) total += table->evaluations();
  return total;
}

}  // namespace wafersim::mapping
