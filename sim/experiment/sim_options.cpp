#include "sim/experiment/sim_options.h"

#include "models/config/config.h"

namespace wafersim {

void declare_sim_params(config::Schema& schema) {
  schema.add(config::bool_param("sim.contention", true,
                                "Links serialise messages that share them; false = closed-form timing"));
  schema.add(config::int_param("sim.bands", "bands", "0", 0, 65536,
                               "Engine bands of whole rows (SystemC modules); 0 = chosen from the grid"));
  schema.add(
      config::float_param("sim.progress_seconds", "s", "2", 0, 86400, "Wall time between progress lines on stderr"));
  schema.add(config::bool_param("sim.functional", false,
                                "run also evaluates the plan on real numbers (seeded weights, bf16/fp16 rounding) and "
                                "compares every step and token with an Eigen forward pass (docs/VALIDATION.md); exit 1 "
                                "when the error exceeds the tolerance. Timing is unchanged"));
}

SimOptions sim_options_from_config(const config::Config& config) {
  SimOptions options;
  options.contention = config.get_bool("sim.contention");
  options.bands = uint32_t(config.get_int("sim.bands"));
  options.progress_seconds = config.get_float("sim.progress_seconds");
  options.functional = config.get_bool("sim.functional");
  return options;
}

}  // namespace wafersim
