#pragma once
// The timeline of a decode (and of the prefill before it) as a trace in the
// Chrome JSON trace-event format, which the Perfetto UI and chrome://tracing
// open: what `run --trace` and `analytic --trace` write. It is built from the
// backends' common timeline only, so both backends give the same kind of trace.
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/backend/backend.h"

namespace wafersim::reports {

// Decode iterations [first, end) get spans; the prefill is always whole.
struct TraceWindow {
  uint64_t first = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();
};

// Parses "A:B" (iterations A to B - 1; either side may be empty). Returns an
// error message, empty when `text` is valid.
std::string parse_trace_window(const std::string& text, TraceWindow& window);

// One phase's plan and timeline.
struct TracedPhase {
  const mapping::Plan* plan = nullptr;
  const mapping::DecodeTimeline* timeline = nullptr;
};

// `prefill` may have no plan (no prefill timed). Decode spans start after the
// prefill's last chunk, so the trace reads as one timeline. `backend` goes
// into the trace's metadata only. `first_token_steps` (the closed form's, for
// one region of each kind) become spans nested in those regions' first decode
// span, category "steps", when the window holds iteration 0.
nlohmann::json timeline_trace(const TracedPhase& prefill, const TracedPhase& decode, const TraceWindow& window,
                              const std::string& backend,
                              const std::vector<backend::StepCycles>& first_token_steps = {});

}  // namespace wafersim::reports
