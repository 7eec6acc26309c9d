#include "models/wafer_repairs.h"

#include <algorithm>
#include <vector>

#include "models/repair_detours.h"

namespace wafersim {

uint64_t wafer_defect_seed(uint64_t seed, uint32_t wafer) {
  if (wafer == 0) return seed;
  // splitmix64 of the seed and the wafer: nearby seeds and wafers give unrelated streams.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t(wafer) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

WaferRepairs::WaferRepairs(const DefectParams& defects, const SpareParams& spares, uint32_t logical_width,
                           uint32_t logical_height, std::optional<DefectMap> map)
    : defects_(defects),
      spares_(spares),
      logical_width_(logical_width),
      logical_height_(logical_height),
      map_(std::move(map)) {}

const WaferRepair& WaferRepairs::wafer(uint32_t w) const {
  std::lock_guard<std::mutex> lock(mutex_);
  while (repairs_.size() <= w) {
    const uint32_t next = uint32_t(repairs_.size());
    DefectMap map = map_ ? *map_ : [&] {
      DefectParams drawn = defects_;
      drawn.seed = wafer_defect_seed(defects_.seed, next);
      return draw_defects(drawn, logical_width_ + spares_.columns, logical_height_ + spares_.rows);
    }();
    repairs_.push_back(
        repair_wafer(std::move(map), logical_width_, logical_height_, defects_.detour_charge, spares_.scheme));
  }
  return repairs_[w];
}

std::shared_ptr<const DetourTable> WaferRepairs::detours(uint32_t wafers) const {
  std::vector<const WaferRepair*> repaired;
  for (uint32_t w = 0; w < std::max<uint32_t>(wafers, 1); ++w) repaired.push_back(&wafer(w));
  auto table = std::make_shared<DetourTable>(detour_table(repaired, defects_.detour_charge));
  // The longest route meets the most skipped tiles: no detour there, none anywhere.
  if (table->extra_hops.back() == 0) return nullptr;
  return table;
}

std::optional<std::string> WaferRepairs::shortfall(uint32_t wafers) const {
  for (uint32_t w = 0; w < std::max<uint32_t>(wafers, 1); ++w)
    if (wafer(w).missing_tiles > 0)
      return (wafers > 1 ? "wafer " + std::to_string(w) + ": " : std::string()) + repair_shortfall(wafer(w));
  return std::nullopt;
}

RepairSummary WaferRepairs::summary(uint32_t wafers) const {
  RepairSummary out;
  std::vector<const WaferRepair*> repaired;
  for (uint32_t w = 0; w < std::max<uint32_t>(wafers, 1); ++w) {
    const WaferRepair& repair = wafer(w);
    repaired.push_back(&repair);
    out.dead_tiles += repair.defects.dead_tiles;
    out.dead_links += repair.defects.dead_links;
    out.spare_rows_used = std::max(out.spare_rows_used, repair.spare_rows_used());
    out.spare_columns_used = std::max(out.spare_columns_used, repair.spare_columns_used());
  }
  out.extra_hops_mean = extra_hops_mean(repaired);
  out.route_extra_hops_max = detour_table(repaired, defects_.detour_charge).extra_hops.back();
  return out;
}

std::string WaferRepairs::task_on_dead_tile(const ProgramSet& set) const {
  for (uint32_t w = 0; w < set.wafers; ++w) {
    std::string dead = wafersim::task_on_dead_tile(set, w, wafer(w));
    if (!dead.empty()) return dead;
  }
  return "";
}

}  // namespace wafersim
