#include "sim/functional/program_check.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mapping/grid_attention.h"
#include "mapping/line_tree.h"
#include "mapping/mesh_gemm.h"
#include "mapping/moe_dispatch.h"
#include "mapping/slice_exchange.h"

namespace wafersim::functional {

using mapping::BlockGeometry;
using mapping::Region;
using mapping::Step;

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
    if (task.op == TaskOp::Multicast && task.count > 0) out.multicasts.emplace_back(task.dir, task.count);
    if (task.op == TaskOp::Multicast && task.count_back > 0)
      out.multicasts.emplace_back(opposite(task.dir), task.count_back);
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

// What the evaluator assumes tile (i, j) sends, multicasts and awaits in a
// step: each step kind's case (mapping/step_visitor.h). `follows` stays false
// for steps whose movement it does not follow (compute on a line or at the
// root, the lookup); `dispatch` is set for the MoE dispatch, whose combining
// tree is checked on its own (combine_tree_mismatch).
class ExpectedMoves final : public mapping::StepVisitor {
 public:
  ExpectedMoves(uint32_t i, uint32_t j, Moves& out) : i_(i), j_(j), out_(out) {}
  bool follows = false;
  bool dispatch = false;

  void visit(const mapping::RootComputeStep&) override {}
  void visit(const mapping::LookupStep&) override {}
  void visit(const mapping::LineComputeStep&) override {}
  void visit(const mapping::DispatchStep&) override { dispatch = true; }
  // x along the root row, down each column; sums along each row.
  void visit(const mapping::GemvToColumnStep& step) override { gemv_to_column(step, step.input_on_row(), false); }
  // Each column slice along its row; sums down each column.
  void visit(const mapping::GemvToRowStep& step) override { gemv_to_row(step, false); }
  // MeshGEMM: the same, and partials and token blocks each go to the ring successor.
  void visit(const mapping::MeshGemmStep& step) override {
    if (step.from_column())
      gemv_to_row(step, step.ring_block_tokens() > 0);
    else
      gemv_to_column(step, true, step.ring_block_tokens() > 0);
  }
  // The slices down each column, each row's tokens to the ring successor
  // along the KV head's columns, and round the ring down each column.
  void visit(const mapping::SliceExchangeStep& step) override {
    const BlockGeometry& g = step.env().geo;
    if (i_ == g.root_i()) multicast_from(g.down(), g.rows, g.root_i());
    const mapping::KvGroups& lines = step.lines();
    const uint32_t line = lines.of[j_], n = lines.columns(line), p = j_ - lines.start[line];
    if (n > 1) {
      out_.ring_along_row.push_back(int32_t(mapping::interleaved_ring_next(p, n)) - int32_t(p));
      ++out_.awaited;
    }
    if (g.rows > 1) {
      out_.ring_along_column.push_back(int32_t(mapping::interleaved_ring_next(i_, g.rows)) - int32_t(i_));
      ++out_.awaited;
    }
    done();
  }
  void visit(const mapping::GatherStep& step) override {
    const BlockGeometry& g = step.env().geo;
    if (step.along_row() && i_ == g.root_i()) tree(step, true, j_, g.cols);
    if (!step.along_row() && j_ == g.root_j()) tree(step, false, i_, g.rows);
    done();
  }
  void visit(const mapping::BroadcastStep& step) override {
    const BlockGeometry& g = step.env().geo;
    if (i_ == g.root_i() && j_ == g.root_j()) {
      if (step.along_row())
        multicast_from(g.across(), g.cols, g.root_j());
      else
        multicast_from(g.down(), g.rows, g.root_i());
    }
    done();
  }
  void visit(const mapping::AttentionStep& step) override {
    const BlockGeometry& g = step.env().geo;
    const bool root_row = i_ == g.root_i();
    tree(step, false, i_, g.rows);  // partials down each column
    if (root_row) multicast_from(g.down(), g.rows, g.root_i());
    if (!step.row_io()) {
      if (root_row) tree(step, true, j_, g.cols);  // and along the root row to the root
      if (root_row && j_ == g.root_j()) multicast_from(g.across(), g.cols, g.root_j());
    } else if (root_row) {
      // q/k/v slices gathered to the group's root column and partials reduced
      // there (two trees over the group), q/k/v and the output multicast along it.
      const auto [columns, p] = place_in_group(step);
      const uint32_t root = g.line_root(columns);
      tree(step, true, p, columns);
      tree(step, true, p, columns);
      if (p == root) multicast_from(g.across(), columns, root), multicast_from(g.across(), columns, root);
      // With copies of the KV heads, the first copy's root column multicasts the key and value along all of them.
      const mapping::KvGroups& groups = step.groups();
      const uint32_t group = groups.of[j_];
      if (groups.copies > 1 && p == root && groups.first_copy(group) == group)
        multicast_from(g.across(), groups.copy_columns(group), root);
    }
    done();
  }
  // Scores summed along the group's columns in every row and returned along
  // them; the max, the sum and the output reduced down each column, the
  // q/k/v slices, the max and the sum multicast down it.
  // A prefill's grid under decode's groups also moves every row's KV entries:
  // a gather along the group's columns and a multicast back along them.
  void visit(const mapping::GridAttentionStep& step) override {
    const BlockGeometry& g = step.env().geo;
    const auto [columns, p] = place_in_group(step);
    for (int pass = 0; pass < (step.kv_move() && columns > 1 ? 2 : 1); ++pass) {
      tree(step, true, p, columns);
      if (p == g.line_root(columns)) multicast_from(g.across(), columns, g.line_root(columns));
    }
    for (int pass = 0; pass < 3; ++pass) {
      tree(step, false, i_, g.rows);
      if (i_ == g.root_i()) multicast_from(g.down(), g.rows, g.root_i());
    }
    done();
  }

 private:
  // Position k of a tree over n positions along the row's axis (along_row) or the column's, rooted where the
  // block roots a line of n.
  void tree(const Step& step, bool along_row, uint32_t k, uint32_t n) {
    const mapping::LineRole role = mapping::line_role(k, n, step.env().geo.line_root(n), step.tree_shape(n));
    out_.awaited += uint32_t(role.children.size());
    if (role.send_level >= 0)
      (along_row ? out_.tree_along_row : out_.tree_along_column).push_back(int32_t(role.parent) - int32_t(k));
  }
  // A multicast from position `root` of a line of n tiles along `dir`: the tiles after it, then those before it.
  void multicast_from(Dir dir, uint32_t n, uint32_t root) {
    if (root + 1 < n) out_.multicasts.emplace_back(dir, n - 1 - root);
    if (root > 0) out_.multicasts.emplace_back(opposite(dir), root);
  }
  void rings(const BlockGeometry& g) {
    if (g.rows > 1)
      out_.ring_along_column.push_back(int32_t(mapping::interleaved_ring_next(i_, g.rows)) - int32_t(i_)),
          ++out_.awaited;
    if (g.cols > 1)
      out_.ring_along_row.push_back(int32_t(mapping::interleaved_ring_next(j_, g.cols)) - int32_t(j_)), ++out_.awaited;
  }
  void gemv_to_column(const Step& step, bool input_on_row, bool ring) {
    const BlockGeometry& g = step.env().geo;
    tree(step, true, j_, g.cols);
    if (!input_on_row && i_ == g.root_i() && j_ == g.root_j()) multicast_from(g.across(), g.cols, g.root_j());
    if (i_ == g.root_i()) multicast_from(g.down(), g.rows, g.root_i());
    if (ring) rings(g);
    done();
  }
  void gemv_to_row(const Step& step, bool ring) {
    const BlockGeometry& g = step.env().geo;
    tree(step, false, i_, g.rows);
    if (j_ == g.root_j()) multicast_from(g.across(), g.cols, g.root_j());
    if (ring) rings(g);
    done();
  }
  // Column j_'s KV-head group: its column count and j_'s place in it.
  std::pair<uint32_t, uint32_t> place_in_group(const mapping::KvGroupAttention& step) const {
    const std::vector<uint32_t>& start = step.group_start();
    const size_t group = size_t(std::upper_bound(start.begin(), start.end(), j_) - start.begin()) - 1;
    return {start[group + 1] - start[group], j_ - start[group]};
  }
  void done() {
    out_.sort();
    follows = true;
  }

  uint32_t i_, j_;
  Moves& out_;
};

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

// mapping.moe_combine: columns. Each root-row tile of an expert block
// streams to the same column of the block above it in its chain (the block
// that lists it in combine_children) and awaits one stream per child; a
// chain's top streams to nobody (it sends its pieces to the root column).
static std::string combine_columns_mismatch(const mapping::Plan& plan, const Region& region, const Step& dispatch) {
  std::vector<uint32_t> parent(region.blocks.size(), 0);
  for (uint32_t b = 1; b < region.blocks.size(); ++b)
    for (uint32_t child : region.blocks[b].combine_children) parent[child] = b;
  for (uint32_t b = 1; b < region.blocks.size(); ++b) {
    const BlockGeometry& g = region.blocks[b].geo;
    const uint32_t children = uint32_t(region.blocks[b].combine_children.size());
    for (uint32_t j = 0; j < g.cols; ++j) {
      const TreeTasks tasks = tree_tasks(plan, g, 0, j, dispatch.env().tag, dispatch.tags_used());
      bool sends_right = parent[b] == 0 ? tasks.sends.empty() : !tasks.sends.empty();
      if (parent[b] != 0) {
        const BlockGeometry& to = region.blocks[parent[b]].geo;
        for (const Task* send : tasks.sends)
          sends_right = sends_right && send->dwafer == int32_t(to.wafer) - int32_t(g.wafer) &&
                        send->dx == int32_t(to.x(0, j)) - int32_t(g.x(0, j)) &&
                        send->dy == int32_t(to.y(0, j)) - int32_t(g.y(0, j));
      }
      if (!sends_right || tasks.awaited != children)
        return fmt::format(
            "{}, expert block {}, root-row column {}: the program's combining {} the chain's ({} streams awaited of "
            "{})",
            region.name, b, j, sends_right ? "waits differ from" : "send differs from", tasks.awaited, children);
    }
  }
  return "";
}

std::string program_tree_mismatch(const mapping::Plan& plan) {
  for (const Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      for (const auto& step : block.steps) {
        Moves probe;
        ExpectedMoves kind(0, 0, probe);
        step->accept(kind);
        if (kind.dispatch && plan.options.moe_combine != mapping::MoeCombine::Root) {
          const std::string why = plan.options.moe_combine == mapping::MoeCombine::Tree
                                      ? combine_tree_mismatch(plan, region, *step)
                                      : combine_columns_mismatch(plan, region, *step);
          if (!why.empty()) return why;
        }
        if (!kind.follows) continue;
        const BlockGeometry& g = step->env().geo;
        std::map<uint32_t, Moves> seen;
        for (uint32_t i = 0; i < g.rows; ++i)
          for (uint32_t j = 0; j < g.cols; ++j) {
            Moves want;
            ExpectedMoves expected(i, j, want);
            step->accept(expected);
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
