// Accepted and ignored is a bug class (sim.seed and bench --set once were):
// loading a whole experiment must read every parameter the schema declares.
#include <catch2/catch.hpp>

#include "sim/experiment/experiment.h"
#include "workloads/serving/serving_spec.h"

using namespace wafersim;

TEST_CASE("loading an experiment reads every declared parameter", "[config][params]") {
  const config::Config config =
      load_experiment_config(std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml", {});
  // Every section's reader, as the commands call them (serve reads serving.* on top of the rest).
  const Experiment experiment = experiment_from_config(config);
  workloads::serving_from_config(config, experiment.model);

  std::vector<std::string> unread;
  for (const config::ParamSpec& spec : experiment_schema().params())
    if (!config.read_paths().count(spec.path)) unread.push_back(spec.path);
  CHECK(unread == std::vector<std::string>{});
}
