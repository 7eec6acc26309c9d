#pragma once
#include <string>

#include "mapping/plan.h"

namespace wafersim::functional {

// The evaluator combines partial sums by the trees of mapping::tree_role (or
// a MeshGEMM's rings) and hands data on by multicasts; the engine runs the
// plan's ProgramSet. For every GEMV (MeshGEMM included), gather, broadcast and
// attention step, every tile's sends in the programs the engine runs (after
// deduplication) must go where the evaluator's tree or ring sends them (each
// reduction to its tree parent, each ring send to the ring successor), its
// multicasts must reach exactly the tiles the evaluator hands the data to,
// and its waits must count at least its children. Returns the first tile
// where they differ ("" when none).
std::string program_tree_mismatch(const mapping::Plan& plan);

}  // namespace wafersim::functional
