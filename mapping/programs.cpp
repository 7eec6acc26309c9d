// Tile programs from regions: deduplication by content, and the region-to-region sends.
#include "mapping/programs.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "models/field_list.h"
#include "models/task_builders.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

// Deduplicates programs: tiles with equal programs share one.
class ProgramInterner {
 public:
  explicit ProgramInterner(ProgramSet& set) : set_(set) {}
  uint32_t intern(std::vector<Task> tasks) {
    uint64_t hash = kFieldHashSeed;
    for (const Task& t : tasks) hash = hash_fields(hash, t);
    std::vector<uint32_t>& bucket = index_[hash];
    for (uint32_t id : bucket)
      if (set_.programs[id].tasks == tasks) return id;
    set_.programs.push_back(Program{std::move(tasks)});
    bucket.push_back(uint32_t(set_.programs.size() - 1));
    return bucket.back();
  }

 private:
  ProgramSet& set_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> index_;
};

// Tiles whose row and column signatures match run the same program.
std::vector<uint32_t> classes(const Block& block, bool rows) {
  const uint32_t n = rows ? block.geo.rows : block.geo.cols;
  std::map<std::vector<uint64_t>, uint32_t> ids;
  std::vector<uint32_t> out(n);
  for (uint32_t index = 0; index < n; ++index) {
    std::vector<uint64_t> signature{index == 0};
    for (const auto& step : block.steps) step->signature(rows, index, signature);
    out[index] = ids.emplace(std::move(signature), uint32_t(ids.size())).first->second;
  }
  return out;
}

void assemble_block(const Block& block, ProgramInterner& interner, ProgramSet& set, const HardwareSpec& hw) {
  const std::vector<uint32_t> row_class = classes(block, true), col_class = classes(block, false);
  const uint32_t row_classes = *std::max_element(row_class.begin(), row_class.end()) + 1;
  const uint32_t col_classes = *std::max_element(col_class.begin(), col_class.end()) + 1;
  std::vector<uint32_t> program_of(uint64_t(row_classes) * col_classes, ProgramSet::kIdle);
  const Step* attention = nullptr;
  for (const auto& step : block.steps)
    if (step->has_kv_offset()) attention = step.get();
  for (uint32_t i = 0; i < block.geo.rows; ++i) {
    for (uint32_t j = 0; j < block.geo.cols; ++j) {
      uint32_t& program = program_of[uint64_t(row_class[i]) * col_classes + col_class[j]];
      if (program == ProgramSet::kIdle) program = interner.intern(block.program(i, j));
      const uint64_t tile =
          (uint64_t(block.geo.wafer) * hw.grid_height + block.geo.y(i, j)) * hw.grid_width + block.geo.x(i, j);
      set.tile_program[tile] = program;
      if (attention) set.tile_param[tile] = attention->kv_offset(i, j);
      if (block.expert >= 0) set.tile_param[tile] = uint32_t(block.expert);
    }
  }
}

Task root_send(const Region& from, const Region& to, uint64_t bytes, uint32_t iteration_delta) {
  const int32_t dwafer = int32_t(to.box.wafer) - int32_t(from.box.wafer);
  return SendTask()
      .dx(int32_t(to.box.x0) - int32_t(from.box.x0))
      .dy(int32_t(to.box.y0) - int32_t(from.box.y0))
      .dwafer(dwafer)
      .bytes(bytes)
      .tag(kTagInput)
      .category(dwafer != 0 ? Category::OffWafer : Category::Fabric)
      .iteration_delta(iteration_delta)
      .layer(uint16_t(std::max(from.layer, 0)));
}

// What the LM head sends back to the embedding: the sampled token id.
using workloads::kTokenIdBytes;

}  // namespace

void connect_regions(Plan& plan) {
  const bool prefill = plan.phase == Phase::Prefill;
  // A prefill chunk carries its tokens' vectors from region to region.
  const uint64_t vector_bytes =
      dtype_bytes(plan.model.activation_dtype, plan.model.d_model) * plan.tokens_per_iteration;
  const size_t n = plan.regions.size();
  for (size_t r = 0; r < n; ++r) {
    Region& region = plan.regions[r];
    Block& main = region.blocks[0];
    main.root_prologue = {WaitTask().tag(kTagInput).messages(1), MarkTask().slot(Plan::mark_in(r))};
    const bool last = r + 1 == n;
    if (last && prefill) {
      main.root_epilogue = {MarkTask().slot(Plan::mark_out(r))};
      continue;
    }
    const Task send = root_send(region, plan.regions[last ? 0 : r + 1], last ? kTokenIdBytes : vector_bytes,
                                last ? plan.workload.batch : 0);
    main.root_epilogue = {send, MarkTask().slot(Plan::mark_out(r))};
    plan.region_sends.push_back(send);
  }
}

void build_programs(Plan& plan) {
  const HardwareSpec& hw = plan.hw;
  const bool prefill = plan.phase == Phase::Prefill;
  ProgramSet& set = plan.programs;
  set.wafers = hw.wafers;
  set.grid_width = hw.grid_width;
  set.grid_height = hw.grid_height;
  set.iterations =
      prefill ? plan.workload.prefill_order().size() : uint64_t(plan.workload.batch) * plan.workload.decode_tokens;
  set.marks = uint32_t(2 * plan.regions.size());
  set.tile_program.assign(set.tiles(), ProgramSet::kIdle);
  set.tile_param.assign(set.tiles(), 0);
  ProgramInterner interner(set);
  for (const Region& region : plan.regions)
    for (const Block& block : region.blocks) assemble_block(block, interner, set, hw);
  const BlockGeometry& embedding = plan.regions[0].box;
  const uint64_t embedding_root =
      (uint64_t(embedding.wafer) * hw.grid_height + embedding.y0) * hw.grid_width + embedding.x0;
  const uint64_t present = prefill ? set.iterations : std::min<uint64_t>(plan.workload.batch, set.iterations);
  for (uint64_t iteration = 0; iteration < present; ++iteration)
    set.injections.push_back(Injection{embedding_root, kTagInput, iteration});
}

}  // namespace wafersim::mapping
