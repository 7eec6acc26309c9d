#include "sim/reports/speculative_map.h"

#include <fmt/format.h>

#include "sim/experiment/speculative_placement.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

SpeculativeMap speculative_map(const Experiment& experiment, const mapping::Plan& target) {
  const SpeculativeRows rows{target.hw.grid_height, experiment.hardware.grid_height - target.hw.grid_height};
  const mapping::Plan draft = compile_draft_plan(experiment, rows);
  SpeculativeMap out;
  nlohmann::json regions = nlohmann::json::array();
  Table table({{"draft region", "", false},
               {"wafer", "", true},
               {"x", "", true},
               {"y", "", true},
               {"size", "tiles", true},
               {"tiles", "", true},
               {"SRAM peak", "B", true},
               {"SRAM mean", "B", true}});
  for (size_t r = 0; r < draft.regions.size(); ++r) {
    const mapping::BlockGeometry& box = draft.regions[r].box;
    const mapping::RegionStats& stats = draft.stats[r];
    const uint32_t y = rows.target + box.y0;  // the draft's band starts below the target's rows
    regions.push_back({{"name", draft.regions[r].name},
                       {"wafer", box.wafer},
                       {"x", box.x0},
                       {"y", y},
                       {"width_tiles", box.width_x()},
                       {"height_tiles", box.height_y()},
                       {"tiles", stats.tiles},
                       {"weight_bytes", stats.weight_bytes},
                       {"kv_bytes", stats.kv_bytes},
                       {"sram_peak_bytes", stats.sram_peak_bytes},
                       {"sram_mean_bytes", stats.sram_mean_bytes}});
    table.add_row({draft.regions[r].name, std::to_string(box.wafer), std::to_string(box.x0), std::to_string(y),
                   fmt::format("{} x {}", box.width_x(), box.height_y()), std::to_string(stats.tiles),
                   std::to_string(stats.sram_peak_bytes), std::to_string(stats.sram_mean_bytes)});
  }
  const uint64_t max_context = draft.max_context_tokens;
  out.document = {
      {"draft_model", draft.model.name},
      {"draft_tokens", experiment.speculative->draft_tokens},
      {"target_rows", rows.target},
      {"draft_rows", rows.draft},
      {"draft_first_row", rows.target},
      {"draft_wafer", 0},
      {"draft_tiles_used", draft.tiles_used},
      {"draft_sram_peak_bytes", draft.sram_peak_bytes},
      {"draft_sram_mean_bytes", draft.sram_mean_bytes},
      {"draft_max_context_tokens", max_context == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(max_context)},
      {"draft_regions", regions}};
  out.table = fmt::format(
      "\nspeculative decoding: the target on rows 0-{} of every wafer, the draft {} (k = {}) on rows {}-{} of wafer "
      "0: {} tiles, SRAM per tile peak {} bytes, mean {} bytes\n",
      rows.target - 1, draft.model.name, experiment.speculative->draft_tokens, rows.target,
      rows.target + rows.draft - 1, draft.tiles_used, draft.sram_peak_bytes, draft.sram_mean_bytes);
  out.table += table.str();
  return out;
}

}  // namespace wafersim::reports
