#pragma once
// sim.functional for run and analytic: the functional check's figures in the
// result (JSON "functional" object, one table line) and its verdict.
#include "mapping/plan.h"
#include "sim/experiment/experiment.h"
#include "sim/reports/reports.h"

namespace wafersim::reports {

// Refuses, as bad input at sim.functional, a check that cannot run (formats
// it does not emulate, more memory than the process can have): called before
// the plan is compiled, so that no simulation is wasted and `validate` can
// give the same verdict.
void refuse_impossible_functional_check(const Experiment& experiment);

// Runs the check when the experiment asks for it and adds its figures to
// `report` (the "functional" object and one table line); `prefill` is the
// prefill plan that was timed (null: none, or compiled by the check when the
// workload has a prefill). A plan the check cannot evaluate is refused as bad
// input at sim.functional.
void add_functional_check(const Experiment& experiment, const mapping::Plan& plan, const mapping::Plan* prefill,
                          Report& report);

// The one-line message to fail with when the report's numbers diverged; ""
// when they match or were not checked.
std::string functional_failure(const Report& report);

}  // namespace wafersim::reports
