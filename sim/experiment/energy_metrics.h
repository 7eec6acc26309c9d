#pragma once
// Energy per token and power (metrics.energy, docs/ENERGY.md): the plan's
// events (models/program_events.h, the same whichever backend timed the run)
// at the hardware's per-event energies, plus what the wafers and their
// systems draw over the run's time, against the system's rated power.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "models/energy.h"
#include "models/hardware.h"
#include "models/tile_program.h"

namespace wafersim {

struct EnergyMetrics {
  EventCounts events;   // every tile, the whole phase
  EnergyJoules joules;  // the whole phase
  double seconds = 0;
  double joules_per_token = 0;  // decode: per generated token; prefill: per prompt token
  double average_power_watts = 0;
  // The highest mean power over windows of hardware.energy.peak_window_cycles
  // (the average when the run is shorter than one window).
  double peak_power_watts = 0;
  double rated_power_watts = 0;  // of every wafer's system; 0: no published rating

  // True when the peak passes a published rating.
  bool exceeds_rating() const { return rated_power_watts > 0 && peak_power_watts > rated_power_watts; }
};

// The events of `plan` run for its iterations (`inputs` as the backend had
// them): in all, and each iteration's dynamic joules per region. They need no
// timeline, so they can be counted while the backend times the run.
struct CountedEnergy {
  EventCounts events;
  size_t regions = 0;  // an iteration's joules are regions + 1: the last, tiles outside every region
  // [iteration * (regions + 1) + region]; empty where hardware.energy takes no peak window.
  std::vector<double> joules;
};
CountedEnergy count_energy(const mapping::Plan& plan, const IterationInputs& inputs, const HardwareSpec& hw);

// Those events timed by `timeline`, ending at `cycles`; `tokens` share the
// energy. `hw` is the whole system drawing static power (the plan's own
// hardware but where the plan holds only some of the wafer's rows), and the
// one `counted` was counted with. Each region's events of an iteration are
// spread evenly over its span in the timeline for the peak.
EnergyMetrics energy_metrics(const CountedEnergy& counted, const mapping::DecodeTimeline& timeline, uint64_t cycles,
                             uint64_t tokens, const HardwareSpec& hw);
// Both at once.
EnergyMetrics energy_metrics(const mapping::Plan& plan, const IterationInputs& inputs,
                             const mapping::DecodeTimeline& timeline, uint64_t cycles, uint64_t tokens,
                             const HardwareSpec& hw);

// A run that repeats `steps` times one phase after another (speculative
// decoding: the draft's tokens, then the verify pass), each phase's events
// and cycles given per step; the peak is the busier phase's mean power.
struct PhaseEvents {
  EventCounts events;
  uint64_t cycles = 0;
};
EnergyMetrics stepped_energy_metrics(const HardwareSpec& hw, const std::vector<PhaseEvents>& phases, uint64_t steps,
                                     uint64_t tokens);

}  // namespace wafersim
