#include "mapping/timeline.h"

#include <algorithm>
#include <optional>

#include "mapping/context_steps.h"
#include "mapping/pipeline_pass.h"
#include "mapping/region_spans.h"
#include "mapping/routed_passes.h"

namespace wafersim::mapping {

namespace {

bool has_routed_experts(const Plan& plan) {
  return std::any_of(plan.regions.begin(), plan.regions.end(),
                     [](const Region& region) { return region.kind == RegionKind::Moe; });
}

// A full pass whose servers ended one uniform `step` later than they began:
// while the context and the arrival repeat too, so does the pass, `step`
// later each iteration (a saturated pipeline, or a batch's tokens in a row).
struct RepeatingPass {
  uint64_t iteration = 0, context = 0;
  Pass pass;
  Timed step;
  Timed arrival, first_root_free;  // the iteration's arrival, and when the first region's root was free for it
  bool arrival_waited = false;     // the root was busy when the input arrived: the arrival did not matter

  static bool arrival_waits(const Timed& arrival, const Timed& first_root_free) {
    return arrival.cycle <= first_root_free.cycle;  // a tie goes to the root's own path (later())
  }
  // The shift that gives iteration n's pass, if it repeats this one.
  std::optional<Timed> shift_to(uint64_t n, uint64_t context_n, const Timed& arrival_n) const {
    if (n <= iteration || context_n != context) return std::nullopt;
    const Timed shift = repeated(step, n - iteration);
    const bool same_arrival =
        arrival_waited ? arrival_waits(arrival_n, shift.then(first_root_free)) : arrival_n == shift.then(arrival);
    if (!same_arrival) return std::nullopt;
    return shift;
  }
};

// A prefill's chunks are all present at cycle 0, as are the first tokens of
// a decoding batch, so each region runs at its own pace (the slowest region
// before it, or its own span), not at one pace for all. Once every region's
// servers moved on by a step of their own over an iteration, and each
// region's input will keep meeting them as it did, every later iteration at
// the same context repeats the pass with each region's times moved on by its
// own step per iteration. An input that came after its server was free comes
// after again when both move by the same step; one that waited for its server
// waits again while the server's lead (its least wait) lasts: for ever when
// the server's step is no shorter than the input's. Never past the last
// iteration whose input is not fed back.
struct SteadyPipeline {
  uint64_t iteration = 0, context = 0;
  uint64_t last = 0;  // the last iteration it gives
  Pass pass;
  std::vector<Timed> steps;  // [region]

  // The steady pipeline from `pass` of `iteration`, which found the servers at `before`, if it is one.
  static std::optional<SteadyPipeline> after(uint64_t iteration, uint64_t context, uint64_t last_not_fed_back,
                                             const Servers& before, const Pass& pass) {
    const size_t regions = before.root_free.size();
    std::vector<Timed> steps(regions);
    uint64_t last = last_not_fed_back;
    Timed input_step;  // the first region's input is at cycle 0 every time
    for (size_t r = 0; r < regions; ++r) {
      const Timed step = time_between(before.root_free[r], pass.after.root_free[r]);
      const std::vector<Timed>& line_before = before.line_free[r];
      for (size_t i = 0; i < line_before.size(); ++i)
        if (step.then(line_before[i]) != pass.after.line_free[r][i]) return std::nullopt;
      if (pass.came_after_server[r] && step != input_step) return std::nullopt;
      const bool waited = pass.least_wait_cycles[r] != UINT64_MAX;
      if (waited && step.cycle < input_step.cycle)
        last = std::min(last, iteration + pass.least_wait_cycles[r] / (input_step.cycle - step.cycle));
      steps[r] = step;
      input_step = step;  // the next region's input moves on with this region's output
    }
    if (last <= iteration) return std::nullopt;
    return SteadyPipeline{iteration, context, last, pass, std::move(steps)};
  }
  // Whether it gives iteration n's pass.
  bool covers(uint64_t n, uint64_t context_n) const { return n > iteration && n <= last && context_n == context; }
  // The servers before iteration n (> iteration).
  Servers servers_before(uint64_t n) const {
    Servers servers = pass.after;
    for (size_t r = 0; r < steps.size(); ++r) {
      const Timed by = repeated(steps[r], n - 1 - iteration);
      servers.root_free[r] = by.then(servers.root_free[r]);
      for (Timed& t : servers.line_free[r]) t = by.then(t);
    }
    return servers;
  }
};

// A batch decoding in rounds (one token of every sequence each): once a
// round began with every server one uniform step later than the round before
// it, and its tokens left the last region that step later than the round
// before's (so the next round's tokens arrive that step later too), the next
// round repeats it, that step later, if each of its tokens is timed alike at
// its context (PlanSpans::alike: within the span tables' pieces). A
// saturated batch advances by one position per round, so the rounds repeat
// until some region's span changes.
struct RepeatingRound {
  uint64_t first = 0;  // the first iteration of the first round repeated
  Timed step;
  Servers servers;  // before `first`

  // The servers before the round starting at n (a round boundary at or after first).
  Servers servers_before(uint64_t n, uint64_t batch) const {
    return servers.shifted(repeated(step, (n - first) / batch));
  }
};

}  // namespace

uint64_t last_exit_cycle(const DecodeTimeline& timeline) {
  uint64_t cycle = 0;
  for (const std::vector<uint64_t>& finish : timeline.finish)
    for (uint64_t at : finish) cycle = std::max(cycle, at);
  return cycle;
}

DecodeTimeline analytic_timeline(const Plan& plan, const IterationInputs& inputs, TimelineWalk walk,
                                 const TimelineProgress& progress) {
  const size_t regions = plan.regions.size();
  const uint64_t iterations = plan.programs.iterations, batch = plan.workload.batch;
  DecodeTimeline timeline;
  timeline.start.assign(regions, std::vector<uint64_t>(iterations));
  timeline.finish.assign(regions, std::vector<uint64_t>(iterations));
  // A region's chain is timed once per step of its span function rather than
  // once per iteration; regions with routed experts are timed every iteration.
  const PlanSpans spans(plan, inputs);
  // Prefill chunks are all present at cycle 0; a decode token waits for the previous one of its sequence.
  const bool fed_back = plan.phase == Phase::Decode;
  const bool shortcuts = walk == TimelineWalk::Shortcuts && !has_routed_experts(plan);
  // One sequence decoding: each token finds every server done with the one
  // before, so its pass depends on its context alone, shifted to its arrival.
  HeadMemo heads(plan);
  const SendCycles sends(plan);
  auto idle_pass = [&](uint64_t context) {
    return run_pass(plan, spans, sends, AtContext(context), 0, Timed{}, Servers::idle(plan), &heads);
  };
  // Only the figures a token's pass reports are kept per piece: the servers it
  // leaves are rebuilt when a full pass needs them (rarely: when the next token
  // would not find them idle).
  std::optional<ContextSteps<Pass>> idle_passes;
  if (shortcuts && fed_back && batch == 1) {
    auto figures_of_idle_pass = [&](uint64_t context) {
      return run_pass(plan, spans, sends, AtContext(context), 0, Timed{}, Servers::idle(plan), &heads, false);
    };
    // Where the span tables say a pass can change, it is timed there alone; else found by bisection.
    if (const std::optional<std::vector<uint64_t>> starts = spans.starts())
      idle_passes.emplace(ContextSteps<Pass>::KnownStarts{}, *starts, figures_of_idle_pass);
    else
      idle_passes.emplace(spans.contexts(), figures_of_idle_pass);
  }
  std::optional<RepeatingPass> repeating;
  std::optional<SteadyPipeline> steady;
  // One sequence decoding through MoE layers: no pass repeats another, as
  // each token routes anew, but each is timed by parts (routed_passes.h).
  const std::unique_ptr<RoutedPasses> routed =
      walk == TimelineWalk::Shortcuts && fed_back && batch == 1 && has_routed_experts(plan)
          ? RoutedPasses::of(plan, spans, sends)
          : nullptr;
  struct RoutedLast {
    uint64_t iteration = 0;
    Timed arrival;
    uint64_t latest_cycle = 0;  // of its servers
  };
  std::optional<RoutedLast> routed_last;  // the last pass the parts gave, while `servers` is not rebuilt from it

  // The servers before the next iteration: `servers`, or, after a shortcut,
  // `reference->after` shifted by `shift` (built only when a full pass needs them;
  // an idle pass's from its context).
  Servers servers = Servers::idle(plan);
  const Pass* reference = nullptr;
  bool from_idle_pass = false;
  uint64_t idle_context = 0;
  Timed shift;
  auto latest_server_cycle = [&] {
    return reference ? add_cycles(reference->after_latest_cycle, shift.cycle) : servers.latest_cycle();
  };

  // The servers before iteration n, whichever shortcut (or none) gave n - 1.
  auto servers_before = [&](uint64_t n) {
    if (steady) return steady->servers_before(n);
    if (reference) return (from_idle_pass ? idle_pass(idle_context).after : reference->after).shifted(shift);
    return servers;
  };
  const bool rounds = shortcuts && fed_back && batch > 1;
  std::optional<Servers> round_start;  // the servers before the round that began `batch` iterations ago
  std::optional<RepeatingRound> repeating_round;
  // Whether the round beginning at n is timed alike, token for token, to the round before.
  auto round_alike = [&](uint64_t n) {
    for (uint64_t b = 0; b < batch && n + b < iterations; ++b)
      if (!spans.alike(inputs.context(n + b), inputs.context(n + b - batch))) return false;
    return true;
  };

  std::vector<Timed> exits(iterations);
  for (uint64_t n = 0; n < iterations; ++n) {
    if (progress && n % 256 == 0 && n > 0) progress(n);
    if (rounds && n % batch == 0 && n >= batch) {
      if (repeating_round && !round_alike(n)) {
        servers = repeating_round->servers_before(n, batch);
        repeating_round.reset();
        repeating.reset();  // its pass is rounds old: nothing between repeated it
        reference = nullptr;
        round_start = servers;
      } else if (!repeating_round) {
        Servers now = servers_before(n);
        if (round_start && n >= 2 * batch) {
          const Timed step = time_between(round_start->root_free[0], now.root_free[0]);
          bool repeats = now == round_start->shifted(step) && round_alike(n);
          for (uint64_t b = 0; repeats && b < batch; ++b)
            repeats = exits[n - batch + b] == step.then(exits[n - 2 * batch + b]);
          if (repeats) repeating_round = RepeatingRound{n, step, now};
        }
        round_start = std::move(now);
      }
    }
    if (repeating_round) {
      for (size_t r = 0; r < regions; ++r) {
        timeline.start[r][n] = add_cycles(timeline.start[r][n - batch], repeating_round->step.cycle);
        timeline.finish[r][n] = add_cycles(timeline.finish[r][n - batch], repeating_round->step.cycle);
      }
      exits[n] = repeating_round->step.then(exits[n - batch]);
      continue;
    }
    Timed arrival;
    if (fed_back && n >= batch) {
      const Task& back = plan.region_sends[regions - 1];
      arrival =
          exits[n - batch].after(sends.to_next[regions - 1], back.dwafer != 0 ? Category::OffWafer : Category::Fabric);
    }
    const uint64_t context = inputs.context(n);
    if (routed) {
      const uint64_t latest = routed_last ? routed_last->latest_cycle : servers.latest_cycle();
      if (n == 0 || latest < arrival.cycle) {
        if (const std::optional<Pass> pass = routed->pass(inputs, n, arrival)) {
          for (size_t r = 0; r < regions; ++r) {
            timeline.start[r][n] = pass->start[r];
            timeline.finish[r][n] = pass->finish[r];
          }
          exits[n] = pass->exit;
          routed_last = RoutedLast{n, arrival, pass->after_latest_cycle};
          continue;
        }
      }
      if (routed_last) {  // a full pass follows: it needs the servers
        ++timeline.full_passes;
        servers =
            run_pass(plan, spans, sends, inputs, routed_last->iteration, routed_last->arrival, Servers::idle(plan))
                .after;
        routed_last.reset();
      }
    }
    // Iteration 0 finds the servers idle and arrives at 0, as the idle passes were timed.
    if (idle_passes && (n == 0 || latest_server_cycle() < arrival.cycle)) {
      reference = &idle_passes->at(context);
      repeating.reset();  // a repeat holds only over iterations that each repeated the one before
      from_idle_pass = true;
      idle_context = context;
      shift = arrival;
    } else if (std::optional<Timed> repeat = repeating ? repeating->shift_to(n, context, arrival) : std::nullopt) {
      reference = &repeating->pass;
      from_idle_pass = false;
      shift = *repeat;
    } else if (steady && steady->covers(n, context)) {
      const uint64_t times = n - steady->iteration;
      for (size_t r = 0; r < regions; ++r) {
        const uint64_t moved = steady->steps[r].cycle * times;
        timeline.start[r][n] = add_cycles(steady->pass.start[r], moved);
        timeline.finish[r][n] = add_cycles(steady->pass.finish[r], moved);
      }
      exits[n] = steady->pass.exit.then(repeated(steady->steps.back(), times));
      continue;
    } else {
      if (reference) servers = (from_idle_pass ? idle_pass(idle_context).after : reference->after).shifted(shift);
      if (steady) servers = steady->servers_before(n);
      steady.reset();
      repeating.reset();
      reference = nullptr;
      from_idle_pass = false;
      const Timed root_free = servers.root_free[0];
      ++timeline.full_passes;
      // The head steps' memo holds whatever the routing: a batch's MoE passes use it too.
      Pass pass =
          run_pass(plan, spans, sends, inputs, n, arrival, servers, walk == TimelineWalk::Shortcuts ? &heads : nullptr);
      // Whether the servers moved on uniformly, so that the next iteration can repeat this one.
      const Timed step = time_between(root_free, pass.after.root_free[0]);
      const bool next_alike = shortcuts && n + 1 < iterations && inputs.context(n + 1) == context;
      const uint64_t not_fed_back = fed_back ? std::min(batch, iterations) : iterations;
      if (next_alike && n + 1 < not_fed_back)
        steady = SteadyPipeline::after(n, context, not_fed_back - 1, servers, pass);
      if (next_alike && !steady && pass.after == servers.shifted(step)) {
        repeating = RepeatingPass{
            n, context, std::move(pass), step, arrival, root_free, RepeatingPass::arrival_waits(arrival, root_free)};
        reference = &repeating->pass;
        shift = Timed{};
      } else {
        for (size_t r = 0; r < regions; ++r) {
          timeline.start[r][n] = pass.start[r];
          timeline.finish[r][n] = pass.finish[r];
        }
        exits[n] = pass.exit;
        servers = std::move(pass.after);
        continue;
      }
    }
    for (size_t r = 0; r < regions; ++r) {
      timeline.start[r][n] = add_cycles(reference->start[r], shift.cycle);
      timeline.finish[r][n] = add_cycles(reference->finish[r], shift.cycle);
    }
    exits[n] = shift.then(reference->exit);
  }
  if (idle_passes) timeline.full_passes += idle_passes->evaluations();
  // The critical path ends where the last token (or chunk) leaves the last region.
  const Timed* last = nullptr;
  for (const Timed& exit : exits)
    if (!last || exit.cycle >= last->cycle) last = &exit;
  if (last) timeline.critical_path = last->path;
  return timeline;
}

}  // namespace wafersim::mapping
