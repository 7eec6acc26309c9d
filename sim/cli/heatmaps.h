#pragma once
// --heatmaps DIR (docs/OBSERVABILITY.md): per-tile and per-link arrays of the
// whole grid of every wafer as NumPy .npy files, one per quantity and wafer,
// and heatmaps.json naming them, their units and the regions, which
// scripts/heatmaps.py draws. A repaired wafer (docs/DEFECTS.md) adds what
// each tile of its physical grid became (dead, retired, spare, logical).
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "sim/backend/backend.h"

namespace wafersim::cli {

// What the folder's files are named: "wafer<N>_<quantity>.npy" and "heatmaps.json".
inline const std::vector<std::string> kHeatmapFileSuffixes = {".npy", ".json"};

// The plan's arrays (SRAM by kind, region ids, energy), the physical grid of a
// repaired wafer and, with `tiles`, the busy fractions a simulation measured.
// Each file is written atomically, the index last.
void write_heatmaps(const std::string& folder, const mapping::Plan& plan, const backend::TileFigures* tiles);

}  // namespace wafersim::cli
