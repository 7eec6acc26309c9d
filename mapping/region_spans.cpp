#include "mapping/region_spans.h"

#include <algorithm>
#include <set>

namespace wafersim::mapping {

RegionSpan RegionSpan::shifted(const Timed& start) const {
  RegionSpan span = *this;
  if (out.kind == FrontKind::Root) span.out.root = start.then(out.root);  // other fronts leave it unset
  for (Timed& t : span.out.at) t = start.then(t);
  for (Timed& t : span.line_done) t = start.then(t);
  return span;
}

bool RegionSpan::operator==(const RegionSpan& other) const {
  return out.kind == other.out.kind && out.root == other.out.root && out.at == other.out.at &&
         line_done == other.line_done;
}

namespace {

// Steps [first, end) from `in`: run() when they end the chain (its last act
// included), else run_steps(), which the rest of the chain continues.
Front run_until(const Region& region, Front in, size_t first, size_t end, const IterationInputs& inputs,
                uint64_t iteration, std::vector<Timed>* line_done) {
  return end == region.blocks[0].steps.size()
             ? region.run(std::move(in), first, end, inputs, iteration, line_done)
             : region.run_steps(std::move(in), first, end, inputs, iteration, line_done);
}

}  // namespace

RegionSpan RegionSpans::evaluate(const Region& region, const Timed& start, const IterationInputs& inputs,
                                 uint64_t iteration, size_t end) {
  RegionSpan span;
  span.line_done.assign(region.line_tiles(), start);
  span.out = run_until(region, Front::at_root(start), region.head_steps(), end, inputs, iteration, &span.line_done);
  return span;
}

size_t RegionSpans::tabulated_end(const Region& region) {
  if (region.waits_for_line()) return 0;  // its chain depends on when the previous iteration freed each tile
  const auto& steps = region.blocks[0].steps;
  if (region.kind != RegionKind::Moe) return steps.size();
  const size_t first = region.head_steps();
  const EveryExpertAt busiest(0);
  Front front = Front::at_root(Timed{});
  for (size_t s = first; s < steps.size(); ++s) {
    const ContextWatch watched(busiest);
    front = region.run_steps(std::move(front), s, s + 1, watched, 0);
    if (watched.routing_read()) return s > first && steps[s - 1]->output() == FrontKind::Root ? s : 0;
  }
  return steps.size();
}

std::optional<RegionSpans::Cut> RegionSpans::cut(const Region& region, size_t last) {
  const auto& steps = region.blocks[0].steps;
  const size_t first = region.head_steps();
  Cut cut;
  cut.reader = first;
  while (cut.reader < last && !region.reads_context(cut.reader, cut.reader + 1)) ++cut.reader;
  if (cut.reader == last) return std::nullopt;  // one span for every context: nothing to save
  const AtContext any(0);                       // steps that do not read the context
  cut.before_line_done.assign(region.line_tiles(), Timed{});
  cut.before = region.run_steps(Front::at_root(Timed{}), first, cut.reader, any, 0, &cut.before_line_done);
  for (cut.rejoin = cut.reader + 1; cut.rejoin < last; ++cut.rejoin) {
    if (steps[cut.rejoin - 1]->output() != FrontKind::Root || region.reads_context(cut.rejoin, last)) continue;
    RegionSpan after;
    after.out = run_until(region, Front::at_root(Timed{}), cut.rejoin, last, any, 0, &after.line_done);
    if (after.line_done.empty()) continue;  // the root column's figures would come from before the cut
    cut.after = std::move(after);
    break;
  }
  cut.one_reader = !region.reads_context(cut.reader + 1, cut.rejoin);
  return cut;
}

RegionSpan RegionSpans::evaluate_cut(const Region& region, uint64_t context) const {
  RegionSpan span;
  span.line_done = cut_->before_line_done;
  const Front front =
      region.run_steps(cut_->before, cut_->reader, cut_->rejoin, AtContext(context), 0, &span.line_done);
  if (cut_->after) return cut_->after->shifted(front.root);
  // No cut after: on to the end, as evaluate() goes.
  span.out = run_until(region, front, cut_->rejoin, cut_->rejoin, AtContext(context), 0, &span.line_done);
  return span;
}

ContextSteps<RegionSpan> RegionSpans::tabulate(const Region& region, const std::vector<uint64_t>& contexts) const {
  if (!cut_)
    return ContextSteps<RegionSpan>(
        contexts, [&](uint64_t context) { return evaluate(region, Timed{}, AtContext(context), 0, end_); });
  auto at_context = [&](uint64_t context) { return evaluate_cut(region, context); };
  // The span changes only where the one step reading the context changes its output, if it knows where.
  const Step& reader = *region.blocks[0].steps[cut_->reader];
  if (cut_->one_reader)
    if (const std::optional<std::vector<uint64_t>> starts = reader.context_starts(cut_->before, contexts))
      return ContextSteps<RegionSpan>(ContextSteps<RegionSpan>::KnownStarts{}, *starts, at_context);
  return ContextSteps<RegionSpan>(contexts, at_context);
}

RegionSpans::RegionSpans(const Region& region, const std::vector<uint64_t>& contexts, size_t end)
    : end_(end), cut_(cut(region, end_)), steps_(tabulate(region, contexts)) {}

PlanSpans::PlanSpans(const Plan& plan, const IterationInputs& inputs)
    : regions_(plan.regions), of_(plan.regions.size(), nullptr) {
  const uint64_t iterations = plan.programs.iterations;
  contexts_.resize(iterations);
  for (uint64_t n = 0; n < iterations; ++n) contexts_[n] = inputs.context(n);
  std::sort(contexts_.begin(), contexts_.end());
  contexts_.erase(std::unique(contexts_.begin(), contexts_.end()), contexts_.end());
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const Region& region = plan.regions[r];
    const size_t end = RegionSpans::tabulated_end(region);
    if (end == 0) continue;
    auto& table = by_class_[region.timing_class];
    if (!table) table = std::make_unique<RegionSpans>(region, contexts_, end);
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
      const size_t steps = region.blocks[0].steps.size();
      if (!of_[r])
        reads = region.reads_context(0, steps);
      else if (checked.insert(of_[r]).second)
        reads = region.reads_context(0, region.head_steps()) || region.reads_context(of_[r]->end(), steps);
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

std::optional<std::vector<uint64_t>> PlanSpans::starts() const {
  if (context_outside_tables()) return std::nullopt;
  std::vector<uint64_t> starts;
  if (!contexts_.empty()) starts.push_back(contexts_.front());
  for (const auto& [key, table] : by_class_) {
    const std::vector<uint64_t> of_table = table->starts();
    starts.insert(starts.end(), of_table.begin(), of_table.end());
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

uint64_t PlanSpans::evaluations() const {
  uint64_t total = 0;
  for (const auto& [key, table] : by_class_) total += table->evaluations();
  return total;
}

}  // namespace wafersim::mapping
