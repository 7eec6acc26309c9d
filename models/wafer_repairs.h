#pragma once
// The defects and the repair of every wafer of a run (docs/DEFECTS.md). Drawn
// defects differ from wafer to wafer, as real wafers' do: wafer w is drawn
// with its own seed, derived from hardware.defects.seed and w (wafer 0's is
// the seed itself); a map file gives every wafer the same defects. How many
// wafers a run has is the compiler's to decide (hardware.wafers: auto), so a
// wafer is drawn and repaired when first asked for, once.
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "models/defect_map.h"
#include "models/repair.h"

namespace wafersim {

// The figures of a run's repaired wafers together (metrics.defects).
struct RepairSummary {
  uint64_t dead_tiles = 0, dead_links = 0;               // summed over the wafers
  uint32_t spare_rows_used = 0, spare_columns_used = 0;  // the most any wafer used
  double extra_hops_mean = 0;                            // per logical link, over every wafer's links
  uint32_t route_extra_hops_max = 0;                     // what the longest route is charged
};

class WaferRepairs {
 public:
  // `map`: the map file's defects, for every wafer; without it, each wafer's are drawn.
  WaferRepairs(const DefectParams& defects, const SpareParams& spares, uint32_t logical_width, uint32_t logical_height,
               std::optional<DefectMap> map = std::nullopt);

  const WaferRepair& wafer(uint32_t w) const;
  // The detours a run on `wafers` wafers charges (detour_table over all of
  // them); null when no route meets any.
  std::shared_ptr<const DetourTable> detours(uint32_t wafers) const;
  // The first of `wafers` wafers the spares could not repair, with why; nullopt when none.
  std::optional<std::string> shortfall(uint32_t wafers) const;
  RepairSummary summary(uint32_t wafers) const;
  // The first tile of `set` that runs a program on a physical tile its wafer's
  // repair left dead (task_on_dead_tile); "" when none does.
  std::string task_on_dead_tile(const ProgramSet& set) const;

 private:
  DefectParams defects_;
  SpareParams spares_;
  uint32_t logical_width_, logical_height_;
  std::optional<DefectMap> map_;
  mutable std::mutex mutex_;
  mutable std::deque<WaferRepair> repairs_;  // [wafer]; a deque keeps references valid as it grows
};

// Wafer w's seed for drawn defects: `seed` for wafer 0, a mix of both for the others.
uint64_t wafer_defect_seed(uint64_t seed, uint32_t wafer);

}  // namespace wafersim
