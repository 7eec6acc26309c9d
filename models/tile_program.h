#pragma once
// The language of tile programs: what the compiler (mapping/) emits and the
// engine (sim/) and the analytic model execute. A tile runs its program once
// per iteration (one token of one sequence), tasks in order.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/cost.h"
#include "models/dtype.h"
#include "models/field_list.h"

namespace wafersim {

// What a task does (Task::op); the layer graph's operations are workloads::GraphOp.
enum class TaskOp : uint8_t {
  Compute,           // work + work_per_position * positions held by this tile
  Send,              // one message to the tile at (dx, dy) on wafer (own + dwafer); does not block
  Multicast,         // one message along `dir`, delivered at each of the next `count` tiles (and of the `count_back`
                     // tiles the other way); does not block
  Wait,              // block until `count` messages with `tag` of this iteration have arrived
                     // (stream: until their heads have arrived, see Task::stream)
  SkipUnlessExpert,  // skip the next `count` tasks unless one of the `experts` experts from `expert` of MoE
                     // layer `moe_layer` is routed
  SkipIfExpert,      // the opposite: skip them if one of those experts is routed
  Mark,              // record the time (and critical-path breakdown) this tile reaches here, in slot `mark`
};

enum class Dir : uint8_t { East, West, South, North };  // +x, -x, +y, -y
inline Dir opposite(Dir dir) {
  switch (dir) {
    case Dir::East: return Dir::West;
    case Dir::West: return Dir::East;
    case Dir::South: return Dir::North;
    case Dir::North: return Dir::South;
  }
  return dir;
}

// What the critical path spends its time on (metrics.breakdown).
enum class Category : uint8_t { Compute, Fabric, Reduce, OffWafer, Contention, kCount };
const char* category_name(Category category);  // "compute", "fabric", ...

// The cycles of a critical path, split by category: what the engine accounts per
// tile and message, and what the closed form (mapping/timed.h) and a timeline carry.
using CriticalPath = std::array<uint64_t, size_t(Category::kCount)>;

struct Task {
  TaskOp op = TaskOp::Compute;
  Dir dir = Dir::East;
  Category category = Category::Compute;  // of compute time, or of a message's transit time
  Dtype dtype = Dtype::FP16;              // arithmetic rate of a Compute task
  uint16_t tag = 0;                       // Send / Multicast / Wait
  uint16_t layer = 0;                     // for per-layer statistics
  uint32_t count = 0;                     // Wait: messages; Multicast: tiles; SkipUnlessExpert: tasks
  // Multicast: tiles the sender's router also copies the message to, the other
  // way from `dir` (one injection, two directions: a line's middle root).
  uint32_t count_back = 0;
  int32_t dx = 0, dy = 0, dwafer = 0;  // Send destination relative to this tile
  uint32_t relays = 0;                 // Send / Multicast: relay stages on the route (no colour left)
  uint32_t bytes = 0;                  // Send / Multicast payload
  uint32_t expert = 0, moe_layer = 0;  // SkipUnlessExpert, SkipIfExpert
  uint32_t experts = 1;                // they ask about experts expert, expert + 1, ... (any one routed)
  uint32_t expert_offset = 0;          // with expert = kTileParam: the first is the tile's expert + this
  uint32_t mark = 0;                   // Mark slot
  Work work;                           // Compute: fixed work
  // A field set to kTileParam reads this tile's entry of ProgramSet::tile_param
  // instead (kv_offset, expert), so tiles that differ only in that number share one program.
  static constexpr uint32_t kTileParam = 0xffffffffu;
  // Compute: work that grows with the context. This tile holds the KV entries
  // of positions p with p % kv_stride == kv_offset. A layer with a sliding
  // window (kv_window > 0) attends to at most kv_window positions.
  Work work_per_position;
  uint32_t kv_stride = 1, kv_offset = 0, kv_window = 0;
  // Send: the message belongs to iteration (current + iteration_delta); the
  // loop from the LM head back to the embedding feeds the sequence's next token.
  // A message for an iteration past the last is dropped.
  uint32_t iteration_delta = 0;
  // Streamed combining (a pipelined reduction, models/cost.h): a Wait resumes
  // when the heads of its messages (`bytes` in all) arrive and remembers when
  // their tails will; a Send (combining `work` on the way) or a Compute
  // finishes no earlier than those tails plus one add, nor before the core's
  // input ramp has taken in all the bytes.
  bool stream = false;
  // Send: the route takes its y leg before its x leg (routes are x first
  // otherwise; the path is the router's configuration, so either is free).
  bool y_first = false;
  // Send: the route first steps this many tiles across its first leg's axis
  // and steps back after that leg (models/route.h); 0: the plain route.
  int32_t sidestep = 0;

  // Every field, once: equality and the compiler's program deduplication
  // (hash_fields) read this list, and the static_assert below rejects a field
  // missing from it.
  auto fields() const {
    return std::tie(op, dir, category, dtype, tag, layer, count, count_back, dx, dy, dwafer, relays, bytes, expert,
                    moe_layer, experts, expert_offset, mark, work, work_per_position, kv_stride, kv_offset, kv_window,
                    iteration_delta, stream, y_first, sidestep);
  }
  bool operator==(const Task& other) const { return equal_fields(*this, other); }
};
static_assert(aggregate_members<Task>() == listed_fields<Task>(), "Task::fields() must list every field");

struct Program {
  std::vector<Task> tasks;
  bool operator==(const Program& other) const { return tasks == other.tasks; }
};

// Number of positions p < context with p % stride == offset (shift-balanced KV share).
inline uint64_t positions_held(uint64_t context, uint32_t stride, uint32_t offset) {
  return context > offset ? (context - offset + stride - 1) / stride : 0;
}

// What changes from one iteration to the next, supplied by the workload.
class IterationInputs {
 public:
  virtual ~IterationInputs() = default;
  // Positions attended in this iteration (prompt + tokens so far + 1).
  virtual uint64_t context(uint64_t iteration) const = 0;
  virtual bool expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t expert) const = 0;
  // The routed experts among 0, 1, ..., count - 1, ascending, into `out`: what
  // expert_routed says of each, in one call.
  virtual void routed_experts(uint64_t iteration, uint32_t moe_layer, uint32_t count,
                              std::vector<uint32_t>& out) const {
    out.clear();
    for (uint32_t e = 0; e < count; ++e)
      if (expert_routed(iteration, moe_layer, e)) out.push_back(e);
  }
  // Whether any of the experts first, first + 1, ..., first + count - 1 is routed.
  virtual bool any_expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t first, uint32_t count) const {
    for (uint32_t e = first; e < first + count; ++e)
      if (expert_routed(iteration, moe_layer, e)) return true;
    return false;
  }
};

// A message present before the simulation starts (the first token of each sequence).
struct Injection {
  uint64_t tile = 0;
  uint16_t tag = 0;
  uint64_t iteration = 0;
};

// Tile ids are wafer-major: id = (wafer * grid_height + y) * grid_width + x.
struct ProgramSet {
  static constexpr uint32_t kIdle = 0xffffffffu;
  uint32_t wafers = 1, grid_width = 0, grid_height = 0;
  std::vector<Program> programs;       // deduplicated templates
  std::vector<uint32_t> tile_program;  // per tile: index into programs, or kIdle
  uint64_t iterations = 0;             // every program runs this many times
  std::vector<Injection> injections;
  uint32_t marks = 0;  // Mark slots used by the programs
  // Per tile (empty when no task uses it): the tile's KV share or expert, see Task::kTileParam.
  std::vector<uint32_t> tile_param;

  uint64_t tiles() const { return uint64_t(wafers) * grid_width * grid_height; }
};

// Positions whose KV entries `tile` reads in a Compute task at `context`.
// Engine and analytic model both call this.
inline uint64_t task_positions(const Task& task, const ProgramSet& set, uint64_t tile, uint64_t context) {
  if (task.kv_window > 0 && context > task.kv_window) context = task.kv_window;
  const uint32_t offset = task.kv_offset == Task::kTileParam ? set.tile_param[tile] : task.kv_offset;
  return positions_held(context, task.kv_stride, offset);
}

// The (first) expert a SkipUnlessExpert or SkipIfExpert task asks about on `tile`.
inline uint32_t task_expert(const Task& task, const ProgramSet& set, uint64_t tile) {
  return task.expert == Task::kTileParam ? set.tile_param[tile] + task.expert_offset : task.expert;
}

}  // namespace wafersim
