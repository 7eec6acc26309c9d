#pragma once
// `run --explain` and `analytic --explain`: why a decode's figures are what
// they are (docs/METRICS.md, "Why"). Nothing in it is a template filled with
// guesses: the binding resources come from the result's own breakdown, and
// every knob's effect from the closed form re-run with that one `--set`
// value, which `wafersim analytic --set KEY=VALUE` reproduces.
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/plan.h"
#include "sim/experiment/experiment.h"

namespace wafersim::reports {

// The "explain" object of `document`, the decode result (decode_report) of
// `experiment` compiled as `plan`. Re-runs the closed form once per knob and
// per changed preset value: seconds for a one-wafer model, minutes for a
// large multi-wafer one. `progress` (optional) hears "explain: k/n".
nlohmann::json explain_decode(const Experiment& experiment, const mapping::Plan& plan, const nlohmann::json& document,
                              const std::function<void(const std::string&)>& progress = {});

// The table's "why" section of an "explain" object.
std::string explain_table(const nlohmann::json& explain);

}  // namespace wafersim::reports
