#include "sim/experiment/sim_options.h"

#include "models/config/param_table.h"

namespace wafersim {

namespace {

const config::ParamTable<SimOptions>& sim_table() {
  static const config::ParamTable<SimOptions> table =
      config::ParamTable<SimOptions>()
          .add(config::bool_param("sim.contention", true,
                                  "Links serialise messages that share them; false = closed-form timing"),
               &SimOptions::contention)
          .add(config::int_param(
                   "sim.bands", "bands", "0", 0, 65536,
                   "Engine bands of whole rows (SystemC modules); 0 = 8, or one per row on grids of fewer rows"),
               &SimOptions::bands)
          .add(config::float_param("sim.progress_seconds", "s", "2", 0, 86400,
                                   "Wall time between progress lines on stderr"),
               &SimOptions::progress_seconds)
          .add(config::bool_param(
                   "sim.functional", false,
                   "run also evaluates the plan on real numbers (seeded weights, bf16/fp16 rounding) and compares "
                   "every step and token with an Eigen forward pass (docs/VALIDATION.md); exit 1 when the error "
                   "exceeds the tolerance. Timing is unchanged"),
               &SimOptions::functional)
          .add(config::bool_param(
                   "sim.exact_detours", false,
                   "On a repaired wafer the engine charges each message the detour of its own physical path, where "
                   "it runs, instead of hardware.defects.detour_charge's position-free charge, which the closed form "
                   "keeps (docs/DEFECTS.md); the engine then differs from the closed form by what the charge misses"),
               &SimOptions::exact_detours);
  return table;
}

}  // namespace

void declare_sim_params(config::Schema& schema) { sim_table().declare(schema); }

SimOptions sim_options_from_config(const config::Config& config) { return sim_table().read(config); }

}  // namespace wafersim
