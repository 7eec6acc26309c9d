#include "mapping/timeline.h"

#include "mapping/region_spans.h"

namespace wafersim::mapping {

DecodeTimeline analytic_timeline(const Plan& plan, const IterationInputs& inputs) {
  const size_t regions = plan.regions.size();
  const uint64_t iterations = plan.programs.iterations, batch = plan.workload.batch;
  DecodeTimeline timeline;
  timeline.start.assign(regions, std::vector<uint64_t>(iterations));
  timeline.finish.assign(regions, std::vector<uint64_t>(iterations));
  std::vector<Timed> root_free(regions);
  std::vector<Timed> exits(iterations);
  // A region's chain is timed once per step of its span function rather than
  // once per iteration; regions with routed experts are timed every iteration.
  const PlanSpans spans(plan, inputs);
  auto transit = [&](size_t region) {
    const Task& send = plan.region_sends[region];
    return std::make_pair(send_cycles(plan.hw, send), send.dwafer != 0 ? Category::OffWafer : Category::Fabric);
  };
  // Prefill chunks are all present at cycle 0; a decode token waits for the previous one of its sequence.
  const bool fed_back = plan.phase == Phase::Decode;
  for (uint64_t n = 0; n < iterations; ++n) {
    Timed arrival;
    if (fed_back && n >= batch) {
      const auto [cycles, category] = transit(regions - 1);
      arrival = exits[n - batch].after(cycles, category);
    }
    for (size_t r = 0; r < regions; ++r) {
      // The root takes the input when it arrives, or when it is done with the previous iteration.
      const Timed start = later(root_free[r], arrival);
      const RegionSpans* table = spans.of(r);
      const Timed finish = table ? start.then(table->at(inputs.context(n))) : plan.regions[r].finish(start, inputs, n);
      timeline.start[r][n] = start.cycle;
      timeline.finish[r][n] = finish.cycle;
      root_free[r] = finish;
      if (r >= plan.region_sends.size()) break;  // a prefill's last layer sends nothing
      const auto [cycles, category] = transit(r);
      arrival = finish.after(cycles, category);
    }
    exits[n] = root_free[regions - 1];
  }
  // The critical path ends where the last token (or chunk) leaves the last region.
  const Timed* last = nullptr;
  for (const Timed& exit : exits)
    if (!last || exit.cycle >= last->cycle) last = &exit;
  if (last) timeline.critical_path = last->path;
  return timeline;
}

}  // namespace wafersim::mapping
