#pragma once
// serve --capacity: the flags and the command's run (docs/SERVING.md, "Capacity").
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/cli/commands.h"

namespace wafersim::cli {

struct CapacityFlags {
  bool capacity = false;
  std::string slo;  // --slo ttft_p99_ms=500,tpot_p99_ms=2
  uint32_t seeds = 3;
  double tolerance = 0.02;
};

// --capacity, --slo, --capacity-seeds, --capacity-tolerance on `serve`; --requests-csv is a single run's.
void add_capacity_options(CLI::App& serve, CapacityFlags& flags);

// Searches the largest rate per class meeting the SLOs, printing each step on
// stderr and the table on stdout, the JSON to --json.
void serve_capacity(const ExperimentOptions& experiment, const std::string& backend_name, const std::string& step_times,
                    const CapacityFlags& flags);

}  // namespace wafersim::cli
