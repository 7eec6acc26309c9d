#include "sim/reports/timeline_trace.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

namespace wafersim::reports {

namespace {

using nlohmann::json;

constexpr int kPrefillPid = 1;
constexpr int kDecodePid = 2;

bool parse_count(const std::string& text, uint64_t& value) {
  if (text.empty() || text.size() > 19) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  value = std::stoull(text);
  return true;
}

json metadata(const char* name, int pid, int tid, json args) {
  json event = {{"name", name}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

// Spans of one phase, shifted by `offset_cycles`: a track per region, a span
// per iteration, and a counter of iterations that left the last region.
void add_phase(json& events, const TracedPhase& phase, int pid, const char* process, const char* unit,
               const char* counter, uint64_t offset_cycles, uint64_t first, uint64_t end) {
  const mapping::Plan& plan = *phase.plan;
  const mapping::DecodeTimeline& timeline = *phase.timeline;
  const uint64_t iterations = plan.programs.iterations, batch = std::max<uint64_t>(plan.workload.batch, 1);
  // A prefill's chunks follow the workload's order (prompts may differ in length); decode tokens are n / batch.
  const std::vector<std::pair<uint32_t, uint64_t>> chunks = plan.phase == mapping::Phase::Prefill
                                                                ? plan.workload.prefill_order()
                                                                : std::vector<std::pair<uint32_t, uint64_t>>{};
  end = std::min(end, iterations);
  first = std::min(first, end);
  auto us = [&plan, offset_cycles](uint64_t cycle) { return plan.hw.cycles_to_us(double(offset_cycles + cycle)); };

  events.push_back(metadata("process_name", pid, -1, {{"name", process}}));
  events.push_back(metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const int tid = int(r) + 1;
    events.push_back(metadata("thread_name", pid, tid, {{"name", plan.regions[r].name}}));
    events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    for (uint64_t n = first; n < end; ++n) {
      const uint64_t start = timeline.start[r][n], finish = timeline.finish[r][n];
      const uint64_t sequence = chunks.empty() ? n % batch : chunks[n].first;
      const uint64_t index = chunks.empty() ? n / batch : chunks[n].second;
      std::string name = fmt::format("{} {} {}", plan.regions[r].name, unit, index);
      if (batch > 1) name += fmt::format(" seq {}", sequence);
      const double begin_us = us(start);
      events.push_back({{"name", std::move(name)},
                        {"cat", process},
                        {"ph", "X"},
                        {"pid", pid},
                        {"tid", tid},
                        {"ts", begin_us},
                        {"dur", us(finish) - begin_us},
                        {"args",
                         {{"iteration", n},
                          {"sequence", sequence},
                          {unit, index},
                          {"cycles", finish - start},
                          {"start_cycle", offset_cycles + start}}}});
    }
  }
  // The last region's finishes, in time order: the count of iterations done by then.
  std::vector<uint64_t> done(timeline.finish.back().begin(), timeline.finish.back().begin() + iterations);
  std::sort(done.begin(), done.end());
  const uint64_t window_begin = first < end ? timeline.start.front()[first] : 0;
  const uint64_t window_end =
      first < end ? *std::max_element(timeline.finish.back().begin() + first, timeline.finish.back().begin() + end) : 0;
  uint64_t count = 0;
  auto sample = [&](uint64_t cycle) {
    events.push_back(
        {{"name", counter}, {"ph", "C"}, {"pid", pid}, {"ts", us(cycle)}, {"args", {{"completed", count}}}});
  };
  if (first < end) sample(std::min(window_begin, done.empty() ? window_begin : done.front()));
  for (uint64_t cycle : done) {
    ++count;
    if (first < end && cycle >= window_begin && cycle <= window_end) sample(cycle);
  }
}

// The closed form's steps of iteration 0, one after the other inside the
// region's first span; clipped to it, as a viewer nests spans by containment.
void add_first_token_steps(json& events, const TracedPhase& decode, uint64_t offset_cycles,
                           const std::vector<backend::StepCycles>& steps) {
  const mapping::Plan& plan = *decode.plan;
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const uint64_t start = decode.timeline->start[r][0], finish = decode.timeline->finish[r][0];
    uint64_t at = start;
    for (const backend::StepCycles& step : steps) {
      if (step.region != plan.regions[r].name) continue;
      const uint64_t end = std::min(finish, at + step.cycles);
      const double begin_us = plan.hw.cycles_to_us(double(offset_cycles + at));
      events.push_back({{"name", step.step},
                        {"cat", "steps"},
                        {"ph", "X"},
                        {"pid", kDecodePid},
                        {"tid", int(r) + 1},
                        {"ts", begin_us},
                        {"dur", plan.hw.cycles_to_us(double(offset_cycles + end)) - begin_us},
                        {"args", {{"cycles", step.cycles}}}});
      at = end;
    }
  }
}

}  // namespace

std::string parse_trace_window(const std::string& text, TraceWindow& window) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return "expects A:B (decode iterations A to B - 1), got '" + text + "'";
  const std::string first = text.substr(0, colon), end = text.substr(colon + 1);
  TraceWindow parsed;
  if (!first.empty() && !parse_count(first, parsed.first))
    return "expects a whole number before ':', got '" + first + "'";
  if (!end.empty() && !parse_count(end, parsed.end)) return "expects a whole number after ':', got '" + end + "'";
  if (parsed.first >= parsed.end) return "expects A < B in A:B, got '" + text + "'";
  window = parsed;
  return "";
}

json timeline_trace(const TracedPhase& prefill, const TracedPhase& decode, const TraceWindow& window,
                    const std::string& backend, const std::vector<backend::StepCycles>& first_token_steps) {
  json events = json::array();
  uint64_t prefill_cycles = 0;
  if (prefill.plan) {
    prefill_cycles = mapping::last_exit_cycle(*prefill.timeline);
    add_phase(events, prefill, kPrefillPid, "prefill", "chunk", "chunks completed", 0, 0,
              prefill.plan->programs.iterations);
  }
  add_phase(events, decode, kDecodePid, "decode", "token", "tokens completed", prefill_cycles, window.first,
            window.end);
  if (window.first == 0 && decode.plan->programs.iterations > 0)
    add_first_token_steps(events, decode, prefill_cycles, first_token_steps);
  const mapping::Plan& plan = *decode.plan;
  const uint64_t iterations = plan.programs.iterations;
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"backend", backend},
            {"model", plan.model.name},
            {"clock_ghz", plan.hw.clock_ghz},
            {"time_unit", "simulated microseconds"},
            {"prefill_cycles", prefill_cycles},
            {"decode_iterations", iterations},
            {"decode_window", {std::min(window.first, iterations), std::min(window.end, iterations)}}}}};
}

}  // namespace wafersim::reports
