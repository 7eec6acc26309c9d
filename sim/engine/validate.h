#pragma once
// Checks a ProgramSet against the grid before anything is built, so that a bad
// program is reported with the tile it would break on instead of corrupting memory.
#include "models/hardware.h"
#include "models/tile_program.h"

namespace wafersim::sim {

// Throws EngineError naming the tile (wafer, x, y), the task and what is wrong.
void validate_programs(const HardwareSpec& hw, const ProgramSet& set);

}  // namespace wafersim::sim
