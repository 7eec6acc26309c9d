#pragma once
// When each region root started and finished each iteration: what both
// backends produce (the engine through its Mark tasks, the closed form below),
// and what every decode metric is computed from.
#include <cstdint>
#include <functional>
#include <vector>

#include "mapping/plan.h"

namespace wafersim::mapping {

struct DecodeTimeline {
  std::vector<std::vector<uint64_t>> start;   // [region][iteration]
  std::vector<std::vector<uint64_t>> finish;  // [region][iteration]
  // Cycles of the critical path ending at the last token, by Category.
  CriticalPath critical_path{};
  // The closed form only: passes through every region it ran, for iterations
  // no shortcut covered and for its tables: a measure of the shortcuts' saving.
  uint64_t full_passes = 0;
};

// The cycle the last iteration left the last region at (the latest finish of any region).
uint64_t last_exit_cycle(const DecodeTimeline& timeline);

// How the closed form walks the iterations: taking a known pass shifted in
// time wherever it provably repeats (the default: cost independent of the
// token count in the common cases), or passing every iteration through every
// region (what the shortcuts must equal, cycle for cycle).
enum class TimelineWalk { Shortcuts, EveryIteration };

// Contention-free closed form of the plan: each region root is a server that
// takes iterations in order; in decode iteration n + batch enters once n has
// left the LM head, in prefill every chunk is present at cycle 0.
//
// `progress`, when given, hears the iterations done every 256 (the closed
// form of a long MoE decode times each token in full: tens of seconds).
using TimelineProgress = std::function<void(uint64_t iterations_done)>;
DecodeTimeline analytic_timeline(const Plan& plan, const IterationInputs& inputs,
                                 TimelineWalk walk = TimelineWalk::Shortcuts, const TimelineProgress& progress = {});

}  // namespace wafersim::mapping
