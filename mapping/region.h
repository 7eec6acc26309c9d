#pragma once
// Regions: the tiles of one layer (or of the embedding or the LM head), as
// blocks that each run a chain of steps. A region's root receives the
// activation vector, runs the chain, and sends the result to the next region.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mapping/mapping_options.h"
#include "mapping/steps.h"
#include "mapping/task_lists.h"
#include "workloads/lowering.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim::mapping {

// Message tags every region root uses.
enum : uint16_t { kTagInput = 1, kTagFirstStep = 16 };

struct Block {
  BlockGeometry geo;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<Task> root_prologue;  // before the steps, on the block root
  std::vector<Task> root_epilogue;  // after the steps, on the block root
  // With the slices hand-off, per root-column tile i (the root included),
  // instead of the root's: waiting for the slices, or sending them on.
  std::vector<std::vector<Task>> line_prologue, line_epilogue;
  // A routed expert runs only when the router picks it for the iteration.
  int32_t expert = -1;
  uint32_t moe_layer = 0;
  uint32_t tokens = 1;  // each iteration carries this many tokens through the block's steps
  // Expert blocks: the layer root sends the vector to the first expert row's
  // head, which multicasts it down the expert area's first column to the other
  // rows' heads; every head multicasts it along its row.
  uint64_t dispatch_bytes = 0;  // 0: not an expert block
  uint16_t dispatch_tag = 0;
  uint32_t dispatch_row_tiles = 0;     // a row head: tiles after it on the expert row
  uint32_t dispatch_column_tiles = 0;  // the first head: tiles below it on the first column
  bool on_dispatch_column = false;     // the block's first column carries the column multicast
  // mapping.moe_combine: columns. Per column j, what its root-row tile runs
  // first to take the router's choice and the input (a chain's top: the
  // choice and the pieces from the main block, then their multicast down the
  // column; a block below it: that multicast), and what every other tile runs
  // first and last (that multicast, before or after its expert's work),
  // whether or not the expert is routed.
  TaskLists dispatch_in;
  std::vector<Task> dispatch_below, dispatch_below_last;
  // mapping.moe_combine: tree. The block root's part of the combining tree,
  // run whether or not the expert is routed (it may pass others' sums on).
  std::vector<Task> root_combine;
  // mapping.moe_combine: columns. Per column j of the root row, that tile's
  // part of its column's chain, run whether or not the expert is routed.
  TaskLists row_combine;
  // Tree or columns: the blocks whose streams it takes in, in the order it adds them (region block indices).
  std::vector<uint32_t> combine_children;

  // Tasks of tile (i, j), guard and forwarding included.
  std::vector<Task> program(uint32_t i, uint32_t j) const;
  // The same into `tasks` (cleared first), whose storage a caller asking for
  // many programs reuses.
  void program(uint32_t i, uint32_t j, std::vector<Task>& tasks) const;
};

enum class RegionKind { Embedding, Dense, Moe, Head };

struct Region {
  std::string name;  // "embedding", "layer 3", "lm_head"
  RegionKind kind = RegionKind::Dense;
  int32_t layer = -1;         // transformer layer, -1 for embedding and head
  BlockGeometry box;          // all tiles of the region
  std::vector<Block> blocks;  // blocks[0] holds the region root
  uint64_t kv_bytes_per_position = 0;
  // Regions of one timing class run the same chain wherever they sit and
  // whatever their layer number: built from the same kind, box shape and
  // per-layer model figures (attention window, matrix shapes, vector parameters).
  std::vector<uint64_t> timing_class;
  // mapping.handoff: the input arrives as slices on the root column's tiles
  // (the chain starts from Front::Column), or the output leaves from them (it
  // ends on Front::Column), instead of at the root.
  bool slices_in = false, slices_out = false;
  uint32_t experts_per_row = 0;  // MoE: the expert blocks side by side in a row of blocks

  uint32_t line_tiles() const { return blocks[0].geo.rows; }
  // Contention-free: when the chain has finished (the root, or the last of the
  // root column's slices), if the input reached the root (or every root-column
  // tile) at `start` (with the critical path that led there).
  Timed finish(const Timed& start, const IterationInputs& inputs, uint64_t iteration) const;
  // Whether steps [first, last) of the chain ask for the iteration's context (an attention step does).
  bool reads_context(size_t first, size_t last) const;
  // Steps [first, last) of the chain from `in`. `line_done` (optional, one per
  // root-column tile) is updated with when each of those tiles finished its
  // last task of those steps; with `line_free` each tile takes its first slice
  // of data no earlier than it (it was still busy with the previous iteration).
  Front run(Front in, size_t first, size_t last, const IterationInputs& inputs, uint64_t iteration,
            std::vector<Timed>* line_done = nullptr, const std::vector<Timed>* line_free = nullptr) const;
  // run() but for its last act: a chain that ends at the root sets the root's
  // entry of `line_done` to when it got there. Without `line_free`, steps
  // [first, middle) then [middle, last) of it are steps [first, last).
  Front run_steps(Front in, size_t first, size_t last, const IterationInputs& inputs, uint64_t iteration,
                  std::vector<Timed>* line_done = nullptr, const std::vector<Timed>* line_free = nullptr) const;
  // With slices in, the steps up to the first that brings the data to the
  // root (the reduce of the input norm's statistics, the LM head's gather):
  // the part of the chain that depends on when each slice arrived. 0 otherwise.
  size_t head_steps() const;
  // Whether the chain's timing depends on when the root-column tiles were
  // done with the previous iteration beyond its start: a region whose input
  // comes to the root and whose output leaves as slices.
  bool waits_for_line() const { return slices_out && !slices_in; }
  // The same chain step by step: cycles from each step's input being complete
  // to its output being complete, for reports of where a region's time goes.
  std::vector<std::pair<std::string, uint64_t>> step_cycles(const IterationInputs& inputs, uint64_t iteration) const;
};

struct RegionContext {
  const HardwareSpec* hw = nullptr;
  const workloads::ModelSpec* model = nullptr;
  const MappingOptions* options = nullptr;
  uint32_t colors_available = 0;
  uint32_t tokens = 1;   // per iteration: 1 in decode, the chunk in a prefill (StepEnv::tokens)
  bool prefill = false;  // a prefill plan: its projections follow mapping.prefill_gemm
  // Prefill of an MoE layer: tokens each routed expert takes per chunk (0: an even share of the chunk's choices).
  uint32_t expert_tokens = 0;
  // The workload's largest context: attention tiles that hold no position at
  // it keep no attention buffers (0: unknown, every tile keeps them).
  uint64_t max_context = 0;
  // The hand-off with the neighbours (Region::slices_in, slices_out).
  bool slices_in = false, slices_out = false;
  // MoE: expert blocks per row of blocks (0: near-square blocks).
  uint32_t experts_per_row = 0;
  // A prefill: the longest prompt, whose entries a prefill laid out unlike
  // decode keeps in its own layout besides decode's cache (grid_attention.h).
  uint64_t prompt_positions = 0;
  // The prefill's last layer: only the chunk's last position goes on (the LM
  // head takes that one), so its closing gather carries one token's slices.
  bool last_position_out = false;
};

// mapping.moe_experts_per_row: auto. The rows of experts the compiler tries,
// as multiples of the near-square row (1: near square, which wins a tie).
inline constexpr double kExpertRowScales[] = {1.0, 0.5, 0.7, 0.85, 1.2, 1.5};

// A box too small for a region's sub-blocks: the compiler then makes it taller.
class TooFewRows : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Region::name and Region::timing_class of the region build_region would build.
std::string region_name(RegionKind kind, int32_t layer);
std::vector<uint64_t> region_timing_class(const workloads::ModelSpec& model, RegionKind kind, int32_t layer,
                                          const BlockGeometry& box, bool slices_in, bool slices_out);

// Builds a region filling `box`. Throws TooFewRows when the box is too small
// for the region's sub-blocks; any other exception is a compiler fault.
Region build_region(const RegionContext& context, RegionKind kind, int32_t layer, const BlockGeometry& box);

// Whether the vector passes from a region of kind `from` to the next, of kind
// `to`, as slices (mapping.handoff): between distributed layers, the embedding
// and the LM head.
bool slices_handoff(const MappingOptions& options, RegionKind from, RegionKind to);

// The lowering table (workloads/lowering.h) of a region's main block; an MoE
// layer's expert blocks follow workloads::LayerLowering::Expert.
workloads::LayerLowering main_block_lowering(RegionKind kind, const MappingOptions& options);

// Contention-free cycles of the message a Send task sends.
uint64_t send_cycles(const HardwareSpec& hw, const Task& send);

// Bytes a region must hold: its weights, and the KV cache at `max_context`.
uint64_t region_weight_bytes(const workloads::ModelSpec& model, RegionKind kind, int32_t layer);
// With kv_head_copies, as many copies of every KV head's cache (mapping.kv_head_copies).
uint64_t region_kv_bytes(const workloads::ModelSpec& model, RegionKind kind, int32_t layer, uint64_t max_context,
                         uint32_t kv_head_copies = 1);

}  // namespace wafersim::mapping
