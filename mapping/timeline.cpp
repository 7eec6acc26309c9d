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
  // With the slices hand-off each root-column tile is a server of its own: when
  // it was done with the previous iteration.
  std::vector<std::vector<Timed>> line_free(regions);
  for (size_t r = 0; r < regions; ++r) line_free[r].assign(plan.regions[r].line_tiles(), Timed{});
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
    std::vector<Timed> slices;  // slices in: when the last piece of each root-column tile's slice arrived
    if (fed_back && n >= batch) {
      const auto [cycles, category] = transit(regions - 1);
      arrival = exits[n - batch].after(cycles, category);
    }
    for (size_t r = 0; r < regions; ++r) {
      const Region& region = plan.regions[r];
      // The root (or each root-column tile) takes the input when it arrives, or
      // when it is done with the previous iteration.
      Front front;
      uint64_t start = 0;
      if (region.slices_in) {
        front.kind = FrontKind::Column;
        front.at.resize(region.line_tiles());
        for (uint32_t i = 0; i < region.line_tiles(); ++i) {
          front.at[i] = later(line_free[r][i], slices[i]);
          start = std::max(start, front.at[i].cycle);
        }
        front = region.run(std::move(front), 0, region.head_steps(), inputs, n);
      } else {
        front = Front::at_root(later(root_free[r], arrival));
        start = front.root.cycle;
      }
      const RegionSpans* table = spans.of(r);
      RegionSpan span;
      if (table) {
        span = table->at(inputs.context(n)).shifted(front.root);
      } else {
        span.line_done.assign(region.line_tiles(), front.root);
        span.out = region.run(front, region.head_steps(), region.blocks[0].steps.size(), inputs, n, &span.line_done,
                              region.waits_for_line() ? &line_free[r] : nullptr);
      }
      // Slices out: the last root-column tile's send, or the root's when the input came to the root (programs.cpp).
      const Timed& finish =
          span.out.kind == FrontKind::Column && !region.slices_in ? span.out.at[0] : span.out.latest();
      timeline.start[r][n] = start;
      timeline.finish[r][n] = finish.cycle;
      root_free[r] = span.out.kind == FrontKind::Root ? span.out.root : span.out.at[0];
      line_free[r] = std::move(span.line_done);
      if (r >= plan.region_sends.size()) break;  // a prefill's last layer sends nothing
      if (region.slices_out) {
        slices.assign(plan.regions[r + 1].line_tiles(), Timed{});
        for (const Plan::HandoffPiece& piece : plan.handoffs[r]) {
          const Category category = piece.send.dwafer != 0 ? Category::OffWafer : Category::Fabric;
          slices[piece.to] =
              later(slices[piece.to], span.out.at[piece.from].after(send_cycles(plan.hw, piece.send), category));
        }
      } else {
        const auto [cycles, category] = transit(r);
        arrival = root_free[r].after(cycles, category);
      }
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
