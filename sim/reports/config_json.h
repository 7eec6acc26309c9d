#pragma once
// A resolved configuration as JSON: every parameter, nested by section as in
// the experiment file, so a result records exactly what produced it.
#include <nlohmann/json.hpp>

#include "models/config/config.h"

namespace wafersim::reports {

nlohmann::json config_json(const config::Config& config);
// One value with its type: 4, 1.1, true, "rmsnorm", [0, 2].
nlohmann::json value_json(const config::Value& value);

}  // namespace wafersim::reports
