#pragma once
// The results `wafersim run` and `wafersim analytic` share: a table on stdout
// and a JSON document, both built from the metric table (metric_table.h).
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/backend/backend.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/metrics.h"

namespace wafersim::reports {

nlohmann::json decode_json(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                           const backend::RunFigures& figures);
std::string decode_table(const Experiment& experiment, const mapping::Plan& plan, const DecodeMetrics& metrics,
                         const backend::RunFigures& figures);

}  // namespace wafersim::reports
