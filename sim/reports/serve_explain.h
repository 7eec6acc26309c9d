#pragma once
// `serve --explain`: what holds a serving run back (docs/SERVING.md, "Why").
// The binding limit is read off the run's own counters (how long a queued
// request could not join the batch, and why; how busy the pipeline was; what
// each class lost to rejections and preemptions), and the batch limit's
// effect is a re-run with it doubled, as `serve --set` would give.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim/reports/serve_report.h"

namespace wafersim::reports {

// Runs serve on a variant of the experiment (the what-ifs).
using ServeRerun = std::function<ServeOutcome(const Experiment&)>;

nlohmann::json explain_serving(const Experiment& experiment, const ServeOutcome& outcome, const ServeRerun& rerun);
// The table's "why" section of an explain_serving object.
std::string serve_explain_table(const nlohmann::json& explain);

}  // namespace wafersim::reports
