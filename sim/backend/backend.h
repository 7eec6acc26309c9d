#pragma once
// A backend evaluates a compiled plan for the workload's iterations and returns
// the timeline every metric is computed from, with figures about its own run.
// `run`, `analytic` and every sweep point reach the backends through this
// interface, chosen by name; a new timing model plugs in here.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "models/tile_program.h"
#include "sim/engine/parallelism_profile.h"
#include "sim/experiment/sim_options.h"
#include "sim/experiment/step_cycles.h"

namespace wafersim::backend {

// Reported every SimOptions::progress_seconds of wall time by backends that take that long.
struct Progress {
  uint64_t tokens_done = 0;
  uint64_t tokens_total = 0;
  double simulated_us = 0;
  double events_per_second = 0;
  double wall_seconds = 0;
  const char* unit = "tokens";  // what tokens_done counts
  bool closed_form = false;     // no simulated time or events to show
};
using ProgressFn = std::function<void(const Progress&)>;

using StepCycles = wafersim::StepCycles;

// Busy cycles of every tile and directed link over a simulated run, in tile id
// order ((wafer * height + y) * width + x); a link is indexed by its source router.
struct TileFigures {
  uint64_t end_cycle = 0;  // the last tile finished: busy fractions are cycles over this
  std::vector<uint64_t> compute_busy_cycles;
  std::array<std::vector<uint64_t>, 4> link_busy_cycles;  // east, west, south, north; empty without contention
};

// What the backend measured about its own run. Figures it cannot measure stay unset (`measured` false).
struct RunFigures {
  std::string backend;    // "sim" or "analytic"
  bool measured = false;  // utilisation, tiles and events below were measured
  double compute_busy_mean = 0, compute_busy_peak = 0;
  double link_busy_mean = 0, link_busy_peak = 0;
  uint64_t tiles_simulated = 0;
  uint64_t events = 0;
  uint64_t link_hops = 0;
  std::vector<StepCycles> first_token_steps;  // the closed form's account of the first token, where offered
  std::vector<StepCycles> region_steps;       // the same for every region (analytic)
  std::shared_ptr<const TileFigures> tiles;   // engine, only when SimOptions::tile_figures asks
  // Engine, only when SimOptions::parallelism_profile asks, and only from
  // evaluate() in this process (a child's evaluation does not carry it).
  std::shared_ptr<const sim::ParallelismProfile> parallelism;
  // The whole command, loading and compiling included; filled by the caller. Not byte-stable.
  double wall_seconds = 0;
  uint64_t peak_rss_bytes = 0;
};

struct Evaluation {
  mapping::DecodeTimeline timeline;
  RunFigures figures;
};

// An evaluation started and not yet collected.
class PendingEvaluation {
 public:
  virtual ~PendingEvaluation() = default;
  // Waits for it; rethrows what it threw. Once only.
  virtual Evaluation collect() = 0;
};

// One that was done when it started.
class ReadyEvaluation : public PendingEvaluation {
 public:
  explicit ReadyEvaluation(Evaluation evaluation) : evaluation_(std::move(evaluation)) {}
  Evaluation collect() override { return std::move(evaluation_); }

 private:
  Evaluation evaluation_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // True when evaluate() returns the plan's contention-free closed form
  // (mapping::analytic_timeline): a caller that tabulates the closed form
  // itself (serving::StepCosts) has nothing to ask it.
  virtual bool is_closed_form() const { return false; }
  virtual Evaluation evaluate(const mapping::Plan& plan, const IterationInputs& inputs, const SimOptions& options,
                              const ProgressFn& progress) const = 0;
  // The same, leaving this process free for one more evaluate(): the engine
  // elaborates SystemC once per process, so it runs this one in a child
  // process (the prefill before the decode); the closed form runs in place.
  virtual Evaluation evaluate_in_child(const mapping::Plan& plan, const IterationInputs& inputs,
                                       const SimOptions& options, const ProgressFn& progress) const {
    return evaluate(plan, inputs, options, progress);
  }
  // The same, started now and collected later: the engine's child runs while
  // this process does its own evaluate() (the prefill beside the decode: their
  // programs are independent), so the machine's second core is used. The
  // child shows no progress of its own (two progress lines would overwrite
  // each other); the closed form evaluates at once.
  virtual std::unique_ptr<PendingEvaluation> start_in_child(const mapping::Plan& plan, const IterationInputs& inputs,
                                                            const SimOptions& options) const {
    return std::make_unique<ReadyEvaluation>(evaluate(plan, inputs, options, {}));
  }
};

// Each backend registers its maker under its name, in its own file:
//   const BackendRegistration registered("sim", "the SystemC engine ...", [] { ... });
// so the names commands offer (`serve --backend`, `describe backends`) and the
// makers behind them are one list. The library is linked whole
// (sim/CMakeLists.txt), so the linker drops no registration.
class BackendRegistration {
 public:
  using Maker = std::unique_ptr<Backend> (*)();
  // std::logic_error when the name is taken.
  BackendRegistration(const char* name, const char* description, Maker maker);
};

// The registered names, sorted.
std::vector<std::string> backend_names();
// Both throw std::invalid_argument for a name not in backend_names().
std::string backend_description(const std::string& name);
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace wafersim::backend
