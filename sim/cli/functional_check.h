#pragma once
// sim.functional for run and analytic: the functional check's figures in the
// result (JSON "functional" object, one table line) and its verdict.
#include "mapping/plan.h"
#include "sim/cli/reports.h"
#include "sim/experiment/experiment.h"

namespace wafersim::cli {

// The exit status when the numbers diverge from the reference.
constexpr int kExitNumbersDiverge = 1;

// Runs the check when the experiment asks for it and adds its figures to
// `report`; returns the message to fail with ("" when the numbers match or
// the check was not asked for). A plan the check cannot evaluate is refused as
// bad input at sim.functional.
std::string add_functional_check(const Experiment& experiment, const mapping::Plan& plan, Report& report);

}  // namespace wafersim::cli
