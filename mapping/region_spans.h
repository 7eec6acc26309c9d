#pragma once
// A region's span (finish - start, with its critical path) as a function of the
// iteration's context, found without evaluating every iteration: what makes the
// closed form's cost independent of the token count.
//
// A region without routed experts depends on the iteration only through the
// context its attention reads, and its span never shrinks as the context grows
// (each tile holds as many positions or more, and every step is a max or a sum
// of its inputs). So when two contexts give the same span, every context between
// gives it too, and bisection over the contexts the run visits finds each step
// of the function with a few evaluations.
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "mapping/plan.h"
#include "mapping/region.h"
#include "mapping/timed.h"

namespace wafersim::mapping {

class RegionSpans {
 public:
  // `contexts`: every context the run visits, sorted, without repeats.
  RegionSpans(const Region& region, const std::vector<uint64_t>& contexts);

  // The span at a context from the constructor's list.
  const Timed& at(uint64_t context) const;
  // Times the region's chain was evaluated: a measure of the saving.
  uint64_t evaluations() const { return evaluations_; }

  // Whether a region's span depends on the iteration only through its context.
  static bool depends_on_context_only(const Region& region);

 private:
  Timed evaluate(uint64_t context);
  void fill(size_t lo, size_t hi, const Timed& span_lo, const Timed& span_hi);
  void append(uint64_t first_context, const Timed& span);

  const Region& region_;
  const std::vector<uint64_t>& contexts_;
  std::vector<std::pair<uint64_t, Timed>> pieces_;  // (first context, span), by context
  uint64_t evaluations_ = 0;
};

// The tables of a plan's regions for the contexts its iterations visit: one per
// timing class (Region::timing_class), none for regions with routed experts.
class PlanSpans {
 public:
  PlanSpans(const Plan& plan, const IterationInputs& inputs);
  // Null when the region must be timed iteration by iteration.
  const RegionSpans* of(size_t region) const { return of_[region]; }
  uint64_t evaluations() const;

 private:
  std::vector<uint64_t> contexts_;
  std::map<std::vector<uint64_t>, std::unique_ptr<RegionSpans>> by_class_;
  std::vector<const RegionSpans*> of_;
};

}  // namespace wafersim::mapping
