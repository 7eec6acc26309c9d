#pragma once
// The sim.* section: how a simulation runs (not what it simulates).
#include <cstdint>

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

struct SimOptions {
  bool contention = true;         // link serialisation between messages; off = closed-form timing
  uint32_t bands = 0;             // engine bands of whole rows (SystemC modules); 0 = chosen from the grid
  double progress_seconds = 2.0;  // progress line after this much wall time (stderr)
  bool functional = false;        // `run` also evaluates the plan on real numbers against a reference
  // The engine charges each route on a repaired wafer the detour of its own path, not the table's charge.
  bool exact_detours = false;
  // Not a configuration key: set by --heatmaps, keeps every tile's and link's busy cycles (RunFigures::tiles).
  bool tile_figures = false;
  // Not a configuration key: set by `bench parallelism`, profiles what a
  // parallel engine could overlap (RunFigures::parallelism).
  bool parallelism_profile = false;
};

void declare_sim_params(config::Schema& schema);
SimOptions sim_options_from_config(const config::Config& config);

}  // namespace wafersim
