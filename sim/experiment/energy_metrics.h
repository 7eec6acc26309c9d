#pragma once
// Energy per token and power (metrics.energy, docs/ENERGY.md): the plan's
// events (models/program_events.h, the same whichever backend timed the run)
// at the hardware's per-event energies, plus what the wafers and their
// systems draw over the run's time, against the system's rated power.
#include <cstdint>

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

// `plan` run for its iterations (`inputs` as the backend had them), timed by
// `timeline`, ending at `cycles`; `tokens` share the energy. `hw` is the whole
// system drawing static power (the plan's own hardware but where the plan holds
// only some of the wafer's rows). Each region's events of an iteration are
// spread evenly over its span in the timeline for the peak.
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
