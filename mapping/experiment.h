#pragma once
// One experiment: the resolved configuration and the typed specs read from it.
#include <string>
#include <vector>

#include "models/config/config.h"

namespace wafersim::mapping {

// Every parameter of every section (hardware, model, workload, mapping, sim).
const config::Schema& experiment_schema();

// Loads and validates an experiment file with --set overrides applied.
config::Config load_experiment_config(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace wafersim::mapping
