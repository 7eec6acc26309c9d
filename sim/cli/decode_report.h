#pragma once
// The results `wafersim run` and `wafersim analytic` share: a table on stdout
// and a JSON document with the same keys.
#include <string>

#include <nlohmann/json.hpp>

#include "mapping/experiment.h"
#include "mapping/plan.h"
#include "mapping/timeline.h"

namespace wafersim::cli {

struct RunFigures {
  std::string engine;              // "sim" or "analytic"
  double compute_busy_mean = 0, compute_busy_peak = 0;
  double link_busy_mean = 0, link_busy_peak = 0;
  uint64_t tiles_simulated = 0;
  uint64_t events = 0;
  uint64_t link_hops = 0;
  double wall_seconds = 0;         // not byte-stable
  uint64_t peak_rss_bytes = 0;     // not byte-stable
};

nlohmann::json decode_json(const mapping::Experiment& experiment, const mapping::Plan& plan,
                           const mapping::DecodeMetrics& metrics, const RunFigures& figures);
std::string decode_table(const mapping::Plan& plan, const mapping::DecodeMetrics& metrics, const RunFigures& figures);

}  // namespace wafersim::cli
