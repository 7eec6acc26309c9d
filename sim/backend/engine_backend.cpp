// The SystemC engine as a backend: the plan's programs on every tile, and the
// timeline read back from its Mark tasks.
#include <algorithm>

#include <fmt/format.h>

#include "sim/backend/backend.h"
#include "sim/backend/child_process.h"
#include "sim/engine/engine.h"
#include "sim/experiment/process_memory.h"

namespace wafersim::backend {

namespace {

constexpr char kName[] = "sim";

mapping::DecodeTimeline timeline_from_marks(const mapping::Plan& plan, const sim::EngineResult& result) {
  const size_t regions = plan.regions.size();
  mapping::DecodeTimeline timeline;
  timeline.start.resize(regions);
  timeline.finish.resize(regions);
  for (size_t r = 0; r < regions; ++r) {
    for (const sim::MarkRecord& mark : result.marks[mapping::Plan::mark_in(r)]) timeline.start[r].push_back(mark.cycle);
    for (const sim::MarkRecord& mark : result.marks[mapping::Plan::mark_out(r)])
      timeline.finish[r].push_back(mark.cycle);
  }
  // The critical path ends where the last token leaves the LM head.
  const std::vector<sim::MarkRecord>& exits = result.marks[mapping::Plan::mark_out(regions - 1)];
  const sim::MarkRecord* last = nullptr;
  for (const sim::MarkRecord& mark : exits)
    if (!last || mark.cycle >= last->cycle) last = &mark;
  if (last) timeline.critical_path = last->path;
  return timeline;
}

// The contention-free closed form never takes longer than the simulation, so a
// decode whose closed form passes SystemC's time limit is refused before the
// mesh is built (the engine itself stops at the limit should contention pass it).
void check_time_limit(const mapping::Plan& plan, const IterationInputs& inputs) {
  const mapping::DecodeTimeline closed_form = mapping::analytic_timeline(plan, inputs);
  uint64_t total_cycles = 0;
  for (uint64_t cycle : closed_form.finish.back()) total_cycles = std::max(total_cycles, cycle);
  if (total_cycles > sim::max_simulated_cycles())
    throw CycleLimitError(fmt::format(
        "the {} takes {} cycles contention-free, more than the {} cycles SystemC can simulate (`analytic` "
        "evaluates it)",
        plan.phase == mapping::Phase::Prefill ? "prefill" : "decode", total_cycles, sim::max_simulated_cycles()));
}

// The mesh's state is allocated tile by tile when SystemC elaborates; a grid
// the process cannot hold is refused before, rather than ending in the kernel's
// out-of-memory killer after minutes of elaboration.
void check_memory(const mapping::Plan& plan, bool contention) {
  const uint64_t needed = sim::engine_state_bytes(plan.hw, contention);
  const uint64_t available = memory_available_bytes();
  if (needed > available)
    throw mapping::DoesNotFitError(fmt::format(
        "simulating every tile of {} wafer(s) of {} needs about {:.2f} GB for the engine's tile state, more than "
        "the {:.2f} GB this process can still take (MemAvailable, ulimit, cgroup); `analytic` needs none of it",
        plan.hw.wafers, plan.hw.name, double(needed) / 1e9, double(available) / 1e9));
}

class EngineBackend : public Backend {
 public:
  const char* name() const override { return kName; }
  Evaluation evaluate(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions& options,
                      const ProgressFn& progress) const override {
    sim::EngineOptions engine;
    engine.contention = options.contention;
    engine.exact_detours = options.exact_detours;
    engine.bands = options.bands;
    engine.progress_seconds = options.progress_seconds;
    engine.keep_tile_busy = options.tile_figures;
    engine.parallelism_profile = options.parallelism_profile;
    const uint64_t tokens = plan.programs.iterations;
    if (progress)
      engine.progress = [&](const sim::EngineProgress& p) {
        progress({p.final_marks, tokens, plan.hw.cycles_to_us(double(p.cycle)),
                  p.seconds > 0 ? double(p.events) / p.seconds : 0.0, p.seconds});
      };
    check_time_limit(plan, inputs);
    check_memory(plan, options.contention);
    const sim::EngineResult result = sim::run_programs(plan.hw, plan.programs, inputs, engine);
    Evaluation evaluation;
    evaluation.timeline = timeline_from_marks(plan, result);
    RunFigures& figures = evaluation.figures;
    figures.backend = name();
    figures.measured = true;
    figures.compute_busy_mean = result.compute_busy_mean;
    figures.compute_busy_peak = result.compute_busy_peak;
    figures.link_busy_mean = result.link_busy_mean;
    figures.link_busy_peak = result.link_busy_peak;
    figures.tiles_simulated = result.tiles_simulated;
    figures.events = result.events;
    figures.link_hops = result.link_hops;
    if (options.parallelism_profile)
      figures.parallelism = std::make_shared<const sim::ParallelismProfile>(result.parallelism);
    if (options.tile_figures) {
      auto tiles = std::make_shared<TileFigures>();
      tiles->end_cycle = result.end_cycle;
      tiles->compute_busy_cycles = result.tile_busy.compute_cycles;
      tiles->link_busy_cycles = result.tile_busy.link_cycles;
      figures.tiles = std::move(tiles);
    }
    return evaluation;
  }
  Evaluation evaluate_in_child(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions& options,
                               const ProgressFn& progress) const override {
    return evaluate_in_forked_child([&] { return with_peak_rss(evaluate(plan, inputs, options, progress)); });
  }
  std::unique_ptr<PendingEvaluation> start_in_child(const mapping::Plan& plan, const IterationInputs& inputs,
                                                    const SimOptions& options) const override {
    return start_in_forked_child([&] { return with_peak_rss(evaluate(plan, inputs, options, {})); });
  }

 private:
  static Evaluation with_peak_rss(Evaluation evaluation) {
    evaluation.figures.peak_rss_bytes = peak_rss_bytes();  // the child's own: the parent cannot see it
    return evaluation;
  }
};

const BackendRegistration registered(kName, "the SystemC engine runs the plan's programs on every tile (run)",
                                     [] { return std::unique_ptr<Backend>(std::make_unique<EngineBackend>()); });

}  // namespace

}  // namespace wafersim::backend
