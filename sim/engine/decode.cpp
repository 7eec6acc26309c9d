#include "sim/engine/decode.h"

namespace wafersim::sim {

namespace {

mapping::DecodeTimeline timeline_from_marks(const mapping::Plan& plan, const EngineResult& result) {
  const size_t regions = plan.regions.size();
  mapping::DecodeTimeline timeline;
  timeline.start.resize(regions);
  timeline.finish.resize(regions);
  for (size_t r = 0; r < regions; ++r) {
    for (const MarkRecord& mark : result.marks[mapping::Plan::mark_in(r)]) timeline.start[r].push_back(mark.cycle);
    for (const MarkRecord& mark : result.marks[mapping::Plan::mark_out(r)]) timeline.finish[r].push_back(mark.cycle);
  }
  // The critical path ends where the last token leaves the LM head.
  const std::vector<MarkRecord>& exits = result.marks[mapping::Plan::mark_out(regions - 1)];
  const MarkRecord* last = nullptr;
  for (const MarkRecord& mark : exits)
    if (!last || mark.cycle >= last->cycle) last = &mark;
  if (last)
    for (size_t c = 0; c < timeline.critical_path.size(); ++c) timeline.critical_path[c] = last->path[c];
  return timeline;
}

}  // namespace

DecodeRun simulate_decode(const mapping::Plan& plan, const IterationInputs& inputs, const EngineOptions& options) {
  DecodeRun run;
  run.engine = run_programs(plan.hw, plan.programs, inputs, options);
  run.timeline = timeline_from_marks(plan, run.engine);
  return run;
}

}  // namespace wafersim::sim
