#pragma once
// A region's span (finish - start, with its critical path) as a function of the
// iteration's context, found without evaluating every iteration: a region
// depends on the iteration only through the context its attention reads
// (mapping/context_steps.h), up to an MoE layer's dispatch, which reads the
// routing.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "mapping/context_steps.h"
#include "mapping/plan.h"
#include "mapping/region.h"
#include "mapping/timed.h"

namespace wafersim::mapping {

// What a region's chain gives from its root's start (after Region::head_steps
// with slices in) at cycle 0: the front it ends on, and when each root-column
// tile was done (Region::run).
struct RegionSpan {
  Front out;
  std::vector<Timed> line_done;

  // The same from a start at `start`.
  RegionSpan shifted(const Timed& start) const;
  bool operator==(const RegionSpan& other) const;
};

class RegionSpans {
 public:
  // `contexts`: every context the run visits, sorted, without repeats.
  // `end`: tabulated_end(region), above 0.
  RegionSpans(const Region& region, const std::vector<uint64_t>& contexts, size_t end);

  // The span at a context from the constructor's list.
  const RegionSpan& at(uint64_t context) const { return steps_.at(context); }
  // The table covers steps [Region::head_steps, end()) of the chain: all of
  // them, or an MoE layer's up to its dispatch, which reads the routing (the
  // front is at the root there, and the rest runs per iteration from it).
  size_t end() const { return end_; }
  // Steps [Region::head_steps, end) from `start` at a context, by evaluating
  // them (with run()'s last act when they end the chain).
  static RegionSpan evaluate(const Region& region, const Timed& start, const IterationInputs& inputs,
                             uint64_t iteration, size_t end);
  // Times the region's chain was evaluated: a measure of the saving.
  uint64_t evaluations() const { return steps_.evaluations(); }
  // The contexts where the span changes, the first visited among them.
  std::vector<uint64_t> starts() const { return steps_.starts(); }

  // How far a region's chain depends on the iteration only through its
  // context (end()); 0: a table would cover none of it.
  static size_t tabulated_end(const Region& region);

 private:
  // The chain cut around the steps the context can change, which are all a
  // table evaluates per context: those before the one step that reads it run
  // once, and those after the front next comes to the root (when they set the
  // root column's figures themselves and read no context) run once from cycle
  // 0, to be shifted to when it comes. Every figure being a latest or a sum
  // of times, both give what evaluate() gives (region_spans_test.cpp holds it).
  struct Cut {
    size_t reader = 0, rejoin = 0;  // steps [reader, rejoin) run per context
    bool one_reader = true;         // no step after `reader` among them reads the context
    Front before;                   // from the root at cycle 0, before `reader`
    std::vector<Timed> before_line_done;
    std::optional<RegionSpan> after;  // steps [rejoin, end()) from the root at cycle 0
  };
  static std::optional<Cut> cut(const Region& region, size_t end);
  RegionSpan evaluate_cut(const Region& region, uint64_t context) const;
  ContextSteps<RegionSpan> tabulate(const Region& region, const std::vector<uint64_t>& contexts) const;

  size_t end_;
  std::optional<Cut> cut_;
  ContextSteps<RegionSpan> steps_;
};

// The tables of a plan's regions for the contexts its iterations visit: one per
// timing class (Region::timing_class), none for regions with routed experts or
// whose chain waits for its root column's tiles (Region::waits_for_line).
class PlanSpans {
 public:
  PlanSpans(const Plan& plan, const IterationInputs& inputs);
  // Every context the plan's iterations visit, sorted, without repeats.
  const std::vector<uint64_t>& contexts() const { return contexts_; }
  // Null when the region must be timed iteration by iteration.
  const RegionSpans* of(size_t region) const { return of_[region]; }
  // Whether the plan times an iteration alike at two of the contexts: the same
  // piece of every table, and nothing outside the tables (a region without
  // one, a region's head steps) asks for the context. Routing aside.
  bool alike(uint64_t context_a, uint64_t context_b) const;
  // The contexts where the plan's timing of an iteration can change, routing
  // aside: every table's piece starts, and the first context visited. None
  // when something outside the tables asks for the context.
  std::optional<std::vector<uint64_t>> starts() const;
  uint64_t evaluations() const;

 private:
  // Whether some region's steps outside its table ask for the context, found
  // when first asked.
  bool context_outside_tables() const;

  const std::vector<Region>& regions_;
  std::vector<uint64_t> contexts_;
  std::map<std::vector<uint64_t>, std::unique_ptr<RegionSpans>> by_class_;
  std::vector<const RegionSpans*> of_;
  mutable std::optional<bool> context_outside_tables_;
};

}  // namespace wafersim::mapping
