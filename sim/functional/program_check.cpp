#include "sim/functional/program_check.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mapping/line_tree.h"
#include "mapping/mesh_gemm.h"

namespace wafersim::functional {

using mapping::BlockGeometry;
using mapping::Region;
using mapping::Step;
using mapping::StepDataflow;
using mapping::StepKind;

namespace {

// The messages one tile of a block sends within a step: reduction-tree sends
// (offsets toward their parents along the root row's axis or the column's),
// ring sends (MeshGEMM), multicasts, and the messages it awaits. Offsets are
// in block positions (rows i, columns j).
struct Moves {
  std::vector<int32_t> tree_along_row, tree_along_column, ring_along_row, ring_along_column;
  std::vector<std::pair<Dir, uint32_t>> multicasts;  // direction, tiles reached
  uint32_t awaited = 0;                              // Found: messages waited for; Expected: at least this many
  std::string stray;                                 // Found: a send that leaves the block's lines
  void sort() {
    for (auto* list : {&tree_along_row, &tree_along_column, &ring_along_row, &ring_along_column})
      std::sort(list->begin(), list->end());
    std::sort(multicasts.begin(), multicasts.end());
  }
};

// Tiles share deduplicated programs: `seen` keeps each program's moves in the step.
const Moves& found_moves(const mapping::Plan& plan, const mapping::Step& step, uint32_t i, uint32_t j,
                         std::map<uint32_t, Moves>& seen) {
  const ProgramSet& set = plan.programs;
  const BlockGeometry& g = step.env().geo;
  const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(i, j)) * set.grid_width + g.x(i, j);
  auto [it, fresh] = seen.try_emplace(set.tile_program[tile]);
  Moves& out = it->second;
  if (!fresh || set.tile_program[tile] == ProgramSet::kIdle) return out;
  const uint16_t first = step.env().tag, last = uint16_t(first + step.tags_used());
  for (const Task& task : set.programs[set.tile_program[tile]].tasks) {
    if (task.tag < first || task.tag >= last) continue;
    if (task.op == TaskOp::Wait) out.awaited += task.count;
    if (task.op == TaskOp::Multicast) out.multicasts.emplace_back(task.dir, task.count);
    if (task.op != TaskOp::Send) continue;
    const int32_t di = g.across_is_x ? task.dy : task.dx, dj = g.across_is_x ? task.dx : task.dy;
    const bool reduce = task.category == Category::Reduce;
    if (task.dwafer != 0 || (di != 0) == (dj != 0))
      out.stray = fmt::format("a send by ({}, {}) rows and columns", di, dj);
    else if (di == 0)
      (reduce ? out.tree_along_row : out.ring_along_row).push_back(dj);
    else
      (reduce ? out.tree_along_column : out.ring_along_column).push_back(di);
  }
  out.sort();
  return out;
}

// What the evaluator assumes tile (i, j) sends, multicasts and awaits in the
// step; false for steps whose movement it does not follow (compute on a
// line or at the root, the MoE dispatch, the lookup).
bool expected_moves(const mapping::Step& step, uint32_t i, uint32_t j, Moves& out) {
  const StepDataflow df = step.dataflow();
  const BlockGeometry& g = step.env().geo;
  // Position k of a tree over n positions along the row's axis (along_row) or the column's.
  auto tree = [&](bool along_row, uint32_t k, uint32_t n) {
    const mapping::TreeRole role = mapping::tree_role(k, n, step.tree_shape(n));
    for (uint32_t c : role.children_per_level) out.awaited += c;
    if (role.send_level >= 0)
      (along_row ? out.tree_along_row : out.tree_along_column).push_back(-int32_t(role.parent_distance));
  };
  auto multicast = [&](Dir dir, uint32_t tiles) {
    if (tiles > 0) out.multicasts.emplace_back(dir, tiles);
  };
  const bool ring = df.ring_block_tokens > 0;
  auto rings = [&] {  // MeshGEMM: partials and token blocks each go to the ring successor
    if (g.rows > 1)
      out.ring_along_column.push_back(int32_t(mapping::interleaved_ring_next(i, g.rows)) - int32_t(i)), ++out.awaited;
    if (g.cols > 1)
      out.ring_along_row.push_back(int32_t(mapping::interleaved_ring_next(j, g.cols)) - int32_t(j)), ++out.awaited;
  };
  switch (df.kind) {
    case StepKind::GemvToColumn:  // x along the root row, down each column; sums along each row
      tree(true, j, g.cols);
      if (!df.input_on_row && i == 0 && j == 0) multicast(g.across(), g.cols - 1);
      if (i == 0) multicast(g.down(), g.rows - 1);
      if (ring) rings();
      break;
    case StepKind::GemvToRow:  // each column slice along its row; sums down each column
      tree(false, i, g.rows);
      if (j == 0) multicast(g.across(), g.cols - 1);
      if (ring) rings();
      break;
    case StepKind::Gather:
      if (df.along_row && i == 0) tree(true, j, g.cols);
      if (!df.along_row && j == 0) tree(false, i, g.rows);
      break;
    case StepKind::Broadcast:
      if (i == 0 && j == 0) multicast(df.along_row ? g.across() : g.down(), df.along_row ? g.cols - 1 : g.rows - 1);
      break;
    case StepKind::Attention:
      if (df.grid) {
        // Scores summed along the group's columns in every row and returned along
        // them; the max, the sum and the output reduced down each column, the
        // q/k/v slices, the max and the sum multicast down it.
        const std::vector<uint32_t>& start = df.group_start;
        const size_t group = size_t(std::upper_bound(start.begin(), start.end(), j) - start.begin()) - 1;
        const uint32_t columns = start[group + 1] - start[group], p = j - start[group];
        tree(true, p, columns);
        if (p == 0) multicast(g.across(), columns - 1);
        for (int pass = 0; pass < 3; ++pass) {
          tree(false, i, g.rows);
          if (i == 0) multicast(g.down(), g.rows - 1);
        }
        break;
      }
      tree(false, i, g.rows);  // partials down each column
      if (i == 0) multicast(g.down(), g.rows - 1);
      if (!df.row_io) {
        if (i == 0) tree(true, j, g.cols);  // and along the root row to the root
        if (i == 0 && j == 0) multicast(g.across(), g.cols - 1);
      } else if (i == 0) {
        // q/k/v slices gathered to the group's first column and partials reduced
        // there (two trees over the group), q/k/v and the output multicast along it.
        const std::vector<uint32_t>& start = df.group_start;
        const size_t group = size_t(std::upper_bound(start.begin(), start.end(), j) - start.begin()) - 1;
        const uint32_t columns = start[group + 1] - start[group], p = j - start[group];
        tree(true, p, columns);
        tree(true, p, columns);
        if (p == 0) multicast(g.across(), columns - 1), multicast(g.across(), columns - 1);
      }
      break;
    default: return false;
  }
  out.sort();
  return true;
}

// The reduction sends and the messages awaited of one tile within a step's tags.
struct TreeTasks {
  std::vector<const Task*> sends;
  uint32_t awaited = 0;
};
TreeTasks tree_tasks(const mapping::Plan& plan, const BlockGeometry& g, uint32_t i, uint32_t j, uint16_t first_tag,
                     uint16_t tags) {
  const ProgramSet& set = plan.programs;
  const uint64_t tile = (uint64_t(g.wafer) * set.grid_height + g.y(i, j)) * set.grid_width + g.x(i, j);
  TreeTasks out;
  if (set.tile_program[tile] == ProgramSet::kIdle) return out;
  for (const Task& task : set.programs[set.tile_program[tile]].tasks) {
    if (task.tag < first_tag || task.tag >= first_tag + tags) continue;
    if (task.op == TaskOp::Send && task.category == Category::Reduce) out.sends.push_back(&task);
    if (task.op == TaskOp::Wait) out.awaited += task.count;
  }
  return out;
}

}  // namespace

// mapping.moe_combine: tree. Each expert block root streams to its parent's
// root (the block that lists it in combine_children, or the layer root) and
// awaits one stream per child.
static std::string combine_tree_mismatch(const mapping::Plan& plan, const Region& region, const Step& dispatch) {
  std::vector<uint32_t> parent(region.blocks.size(), 0);
  for (uint32_t b = 1; b < region.blocks.size(); ++b)
    for (uint32_t child : region.blocks[b].combine_children) parent[child] = b;
  for (uint32_t b = 1; b < region.blocks.size(); ++b) {
    const BlockGeometry& g = region.blocks[b].geo;
    const BlockGeometry& to = region.blocks[parent[b]].geo;
    const TreeTasks tasks = tree_tasks(plan, g, 0, 0, dispatch.env().tag, dispatch.tags_used());
    bool sends_right = !tasks.sends.empty();
    for (const Task* send : tasks.sends)
      sends_right = sends_right && send->dwafer == int32_t(to.wafer) - int32_t(g.wafer) &&
                    send->dx == int32_t(to.x0) - int32_t(g.x0) && send->dy == int32_t(to.y0) - int32_t(g.y0);
    const uint32_t children = uint32_t(region.blocks[b].combine_children.size());
    if (!sends_right || tasks.awaited != children)
      return fmt::format("{}, expert block {}: the program's combining {} the tree's ({} streams awaited of {})",
                         region.name, b, sends_right ? "waits differ from" : "send differs from", tasks.awaited,
                         children);
  }
  return "";
}

std::string program_tree_mismatch(const mapping::Plan& plan) {
  for (const Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      for (const auto& step : block.steps) {
        if (step->dataflow().kind == StepKind::Dispatch && plan.options.moe_combine == mapping::MoeCombine::Tree) {
          const std::string why = combine_tree_mismatch(plan, region, *step);
          if (!why.empty()) return why;
        }
        const BlockGeometry& g = step->env().geo;
        Moves probe;
        if (!expected_moves(*step, 0, 0, probe)) continue;
        std::map<uint32_t, Moves> seen;
        for (uint32_t i = 0; i < g.rows; ++i)
          for (uint32_t j = 0; j < g.cols; ++j) {
            Moves want;
            expected_moves(*step, i, j, want);
            const Moves& got = found_moves(plan, *step, i, j, seen);
            std::string what;
            if (!got.stray.empty())
              what = got.stray;
            else if (got.tree_along_row != want.tree_along_row || got.tree_along_column != want.tree_along_column)
              what = "the program's reduction send differs from its tree's";
            else if (got.ring_along_row != want.ring_along_row || got.ring_along_column != want.ring_along_column)
              what = "the program's ring send differs from the ring's successor";
            else if (got.multicasts != want.multicasts)
              what = "the program's multicasts differ from the tiles the step delivers to";
            else if (got.awaited < want.awaited)  // waits also take inputs: at least the children, never fewer
              what = fmt::format("the program's waits differ from its tree's ({} children awaited of {})", got.awaited,
                                 want.awaited);
            if (!what.empty())
              return fmt::format("{}, step {}, tile (wafer {}, x {}, y {}): {}", region.name, step->label(), g.wafer,
                                 g.x(i, j), g.y(i, j), what);
          }
      }
  return "";
}

}  // namespace wafersim::functional
