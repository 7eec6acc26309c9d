// Tile programs from regions: deduplication by content, and the region-to-region sends.
#include "mapping/programs.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "models/cost.h"
#include "models/field_list.h"
#include "models/route.h"
#include "models/task_builders.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

// Deduplicates programs: tiles with equal programs share one.
class ProgramInterner {
 public:
  explicit ProgramInterner(ProgramSet& set) : set_(set) {}
  // Copies the tasks only when they are new: most tiles' are not.
  uint32_t intern(const std::vector<Task>& tasks) {
    uint64_t hash = kFieldHashSeed;
    for (const Task& t : tasks) hash = hash_fields(hash, t);
    std::vector<uint32_t>& bucket = index_[hash];
    for (uint32_t id : bucket)
      if (set_.programs[id].tasks == tasks) return id;
    set_.programs.push_back(Program{tasks});
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
    if (rows)  // the root-column tile of row `index` waits for or sends slices of its own
      for (const auto* line : {&block.line_prologue, &block.line_epilogue}) {
        uint64_t hash = kFieldHashSeed;
        if (!line->empty())
          for (const Task& t : (*line)[index]) hash = hash_fields(hash, t);
        signature.push_back(hash);
      }
    if (!rows && index < block.dispatch_in.size())  // the root-row tile of column `index` takes its input its way
      signature.push_back(block.dispatch_in.id(index));
    if (!rows && index < block.row_combine.size())  // the root-row tile of column `index` combines its own slice
      signature.push_back(block.row_combine.id(index));
    out[index] = ids.emplace(std::move(signature), uint32_t(ids.size())).first->second;
  }
  return out;
}

// `tasks`: storage for one tile's program before it is interned, kept from block to block.
void assemble_block(const Block& block, ProgramInterner& interner, ProgramSet& set, const HardwareSpec& hw,
                    std::vector<Task>& tasks) {
  const std::vector<uint32_t> row_class = classes(block, true), col_class = classes(block, false);
  const uint32_t row_classes = *std::max_element(row_class.begin(), row_class.end()) + 1;
  const uint32_t col_classes = *std::max_element(col_class.begin(), col_class.end()) + 1;
  std::vector<uint32_t> program_of(uint64_t(row_classes) * col_classes, ProgramSet::kIdle);
  const Step* attention = nullptr;
  std::vector<const std::vector<uint32_t>*> tile_classes;
  for (const auto& step : block.steps) {
    if (step->has_kv_offset()) attention = step.get();
    if (const std::vector<uint32_t>* classes = step->tile_classes()) tile_classes.push_back(classes);
  }
  std::map<std::vector<uint32_t>, uint32_t> program_of_tile;  // (row class, column class, tile classes) -> program
  std::vector<uint32_t> tile_key;
  for (uint32_t i = 0; i < block.geo.rows; ++i) {
    for (uint32_t j = 0; j < block.geo.cols; ++j) {
      uint32_t* kept = &program_of[uint64_t(row_class[i]) * col_classes + col_class[j]];
      if (!tile_classes.empty()) {
        tile_key.assign({row_class[i], col_class[j]});
        for (const std::vector<uint32_t>* classes : tile_classes)
          tile_key.push_back((*classes)[uint64_t(i) * block.geo.cols + j]);
        kept = &program_of_tile.emplace(tile_key, ProgramSet::kIdle).first->second;
      }
      uint32_t& program = *kept;
      if (program == ProgramSet::kIdle) {
        block.program(i, j, tasks);
        program = interner.intern(tasks);
      }
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
      .dx(int32_t(to.box.root_x()) - int32_t(from.box.root_x()))
      .dy(int32_t(to.box.root_y()) - int32_t(from.box.root_y()))
      .dwafer(dwafer)
      .bytes(bytes)
      .tag(kTagInput)
      .category(dwafer != 0 ? Category::OffWafer : Category::Fabric)
      .iteration_delta(iteration_delta)
      .layer(uint16_t(std::max(from.layer, 0)));
}

// What the LM head sends back to the embedding: the sampled token id.
using workloads::kTokenIdBytes;

// The first element of each row's slice of a vector of `total` elements, and the end.
std::vector<uint64_t> row_starts(const BlockGeometry& geo, uint64_t total) {
  std::vector<uint64_t> start(geo.rows + 1, 0);
  for (uint32_t i = 0; i < geo.rows; ++i) start[i + 1] = start[i] + geo.row_share(total, i);
  return start;
}

// A hand-off between two parallel lines (on one wafer) shifts its pieces along
// them where the lines cut the stream differently or the regions sit side by
// side. Sent plainly, every shift runs on one of the two lines (x first, or y
// first on every other sender) and overlapping shifts cross the same links one
// after another: at a strip's turn a whole chunk's residual through one row.
// Each sender's shift may instead run on a lane of its own (a sidestep,
// models/route.h): a row (column) between the lines costs a turn more, one
// beyond them two hops a row and a turn (two where the lines are one).
struct HandoffLane {
  int32_t off_sending = 0;  // across the lines, from the sending one
  bool y_first = false;     // the route that runs its shift there (Task::y_first, Task::sidestep)
  int32_t sidestep = 0;
  uint64_t extra_cycles = 0;
};

// The lanes a hand-off whose pieces shift by up to `shift` can use, cheapest
// first. The x-first route's own line leads, then the y-first route's, so
// that two lanes are the plain alternation whatever the turns cost.
std::vector<HandoffLane> handoff_lanes(const FabricParams& fabric, bool along_rows, int32_t shift, int32_t apart,
                                       int32_t sending_line, int32_t extent) {
  const int32_t x_first_line = along_rows ? 0 : apart, y_first_line = along_rows ? apart : 0;
  // The lines' own lanes are the plain routes; any other steps off the sending line first.
  const auto lane = [&](int32_t off) {
    if (off == x_first_line) return HandoffLane{off, false, 0, 0};
    if (off == y_first_line) return HandoffLane{off, true, 0, 0};
    return HandoffLane{off, !along_rows, off, 0};
  };
  const auto route_of = [&](const HandoffLane& l) {
    return along_rows ? send_route(shift, apart, l.y_first, l.sidestep)
                      : send_route(apart, shift, l.y_first, l.sidestep);
  };
  const SendRoute plain = route_of(lane(x_first_line));
  const auto rank = [&](int32_t off) { return off == x_first_line ? 0 : off == y_first_line ? 1 : 2; };
  std::vector<HandoffLane> lanes;
  for (int32_t off = -sending_line; off < extent - sending_line; ++off) {
    HandoffLane l = lane(off);
    const SendRoute route = route_of(l);
    l.extra_cycles = (route.hops() - plain.hops()) * uint64_t(fabric.hop_latency_cycles) +
                     (route.turns() - plain.turns()) * uint64_t(fabric.turn_latency_cycles);
    lanes.push_back(l);
  }
  std::stable_sort(lanes.begin(), lanes.end(), [&](const HandoffLane& a, const HandoffLane& b) {
    if (a.extra_cycles != b.extra_cycles) return a.extra_cycles < b.extra_cycles;
    if (rank(a.off_sending) != rank(b.off_sending)) return rank(a.off_sending) < rank(b.off_sending);
    return std::abs(a.off_sending - x_first_line) < std::abs(b.off_sending - x_first_line);
  });
  return lanes;
}

// How many of the cheapest lanes to use: the count that brings the last piece
// in earliest when `overlap` shifts cross one link and no other traffic runs.
size_t lane_count(const std::vector<HandoffLane>& lanes, uint32_t overlap, uint64_t piece_cycles, size_t fewest) {
  size_t best = std::min(fewest, lanes.size());
  uint64_t best_cycles = UINT64_MAX;
  for (size_t k = best; k <= std::min<size_t>(overlap, lanes.size()); ++k) {
    const uint64_t cycles = lanes[k - 1].extra_cycles + (overlap + k - 1) / k * piece_cycles;
    if (cycles < best_cycles) best = k, best_cycles = cycles;
  }
  return best;
}

void spread_handoff(const HardwareSpec& hw, const BlockGeometry& from, std::vector<Plan::HandoffPiece>& pieces) {
  if (pieces.size() < 2) return;
  // The lines run along x when the blocks' rows do (BlockGeometry::x).
  const bool along_rows = !from.across_is_x;
  const auto shift_of = [&](const Task& send) { return along_rows ? send.dx : send.dy; };
  const auto across_of = [&](const Task& send) { return along_rows ? send.dy : send.dx; };
  const int32_t apart = across_of(pieces[0].send);
  int32_t widest = 0;
  uint32_t largest_bytes = 0, senders = 0;
  for (const Plan::HandoffPiece& piece : pieces) {
    if (across_of(piece.send) != apart) return;  // not between two parallel lines
    if (std::abs(shift_of(piece.send)) > std::abs(widest)) widest = shift_of(piece.send);
    largest_bytes = std::max(largest_bytes, piece.send.bytes);
    senders = std::max(senders, piece.from + 1);
  }
  if (widest == 0) return;  // nothing shifts along the lines
  // A link of a line carries the shifts of the senders up to `widest` tiles
  // before it (a line's tiles are neighbours).
  const uint32_t overlap = std::min(uint32_t(std::abs(widest)), senders);
  const std::vector<HandoffLane> lanes =
      handoff_lanes(hw.fabric, along_rows, widest, apart, int32_t(along_rows ? from.root_y() : from.root_x()),
                    int32_t(along_rows ? hw.grid_height : hw.grid_width));
  // Lines apart keep at least the alternation of their two plain routes.
  const size_t count = lane_count(lanes, overlap, serialization_cycles(hw.fabric, largest_bytes), apart == 0 ? 1 : 2);
  if (count <= 2 && apart != 0) return;
  for (Plan::HandoffPiece& piece : pieces) {
    Task& send = piece.send;
    if (shift_of(send) == 0) continue;  // a lane would only lengthen its route
    const HandoffLane& lane = lanes[piece.from % count];
    send.y_first = lane.y_first;
    send.sidestep = lane.sidestep;
  }
}

// The slices hand-off: every root-column tile of `from` sends each piece of its
// slice that a root-column tile of `to` holds straight to that tile.
std::vector<Plan::HandoffPiece> handoff_pieces(const Plan& plan, const Region& from, const Region& to) {
  const BlockGeometry &a = from.blocks[0].geo, &b = to.blocks[0].geo;
  const std::vector<uint64_t> sent = row_starts(a, plan.model.d_model), kept = row_starts(b, plan.model.d_model);
  const int32_t dwafer = int32_t(b.wafer) - int32_t(a.wafer);
  std::vector<Plan::HandoffPiece> pieces;
  uint32_t first = 0;
  for (uint32_t i = 0; i < a.rows; ++i) {
    while (first < b.rows && kept[first + 1] <= sent[i]) ++first;
    for (uint32_t k = first; k < b.rows && kept[k] < sent[i + 1]; ++k) {
      const uint64_t elements = std::min(sent[i + 1], kept[k + 1]) - std::max(sent[i], kept[k]);
      if (elements == 0) continue;
      // A prefill chunk carries its tokens' slices.
      const uint64_t bytes = dtype_bytes(plan.model.activation_dtype, elements) * plan.tokens_per_iteration;
      if (bytes > UINT32_MAX) throw std::logic_error("a slice of the chunk exceeds 4 GiB");
      Task send = SendTask()
                      .dx(int32_t(b.x(k, b.root_j())) - int32_t(a.x(i, a.root_j())))
                      .dy(int32_t(b.y(k, b.root_j())) - int32_t(a.y(i, a.root_j())))
                      .dwafer(dwafer)
                      .bytes(bytes)
                      .tag(kTagInput)
                      .category(dwafer != 0 ? Category::OffWafer : Category::Fabric)
                      .layer(uint16_t(std::max(from.layer, 0)));
      // Where the two lines cut the stream differently the pieces shift along
      // them; every other source tile's pieces shift along the receiving line
      // (y first), so the two lines' links share the shifts.
      send.y_first = dwafer == 0 && i % 2 == 1;
      pieces.push_back({i, k, send});
    }
  }
  if (dwafer == 0) spread_handoff(plan.hw, a, pieces);
  return pieces;
}

}  // namespace

void connect_regions(Plan& plan) {
  const bool prefill = plan.phase == Phase::Prefill;
  // A prefill chunk carries its tokens' vectors from region to region.
  const uint64_t vector_bytes =
      dtype_bytes(plan.model.activation_dtype, plan.model.d_model) * plan.tokens_per_iteration;
  const size_t n = plan.regions.size();
  plan.handoffs.assign(n, {});
  for (size_t r = 0; r + 1 < n; ++r)
    if (plan.regions[r].slices_out) plan.handoffs[r] = handoff_pieces(plan, plan.regions[r], plan.regions[r + 1]);
  for (size_t r = 0; r < n; ++r) {
    Region& region = plan.regions[r];
    Block& main = region.blocks[0];
    const Task mark_in = MarkTask().slot(Plan::mark_in(r)), mark_out = MarkTask().slot(Plan::mark_out(r));
    if (region.slices_in) {
      // Every root-column tile waits for the pieces of its slice (none: its slice is empty) and marks the start.
      if (r == 0 || !plan.regions[r - 1].slices_out) throw std::logic_error(region.name + ": slices come from nowhere");
      std::vector<uint32_t> pieces(region.line_tiles(), 0);
      for (const Plan::HandoffPiece& piece : plan.handoffs[r - 1]) ++pieces[piece.to];
      main.line_prologue.assign(region.line_tiles(), {});
      for (uint32_t i = 0; i < region.line_tiles(); ++i) {
        if (pieces[i] > 0) main.line_prologue[i].push_back(WaitTask().tag(kTagInput).messages(pieces[i]));
        main.line_prologue[i].push_back(mark_in);
      }
    } else {
      main.root_prologue = {WaitTask().tag(kTagInput).messages(1), mark_in};
    }
    const bool last = r + 1 == n;
    if (region.slices_out) {
      if (last) throw std::logic_error(region.name + ": slices go nowhere");
      main.line_epilogue.assign(region.line_tiles(), {});
      const Task* slowest = nullptr;
      for (const Plan::HandoffPiece& piece : plan.handoffs[r]) {
        main.line_epilogue[piece.from].push_back(piece.send);
        if (!slowest || send_cycles(plan.hw, piece.send) > send_cycles(plan.hw, *slowest)) slowest = &piece.send;
      }
      // A region that takes its input at the root finishes when its root has
      // sent its own slice: the root may start the next iteration while the
      // scatter still runs down the column, and a region's spans must not overlap.
      for (uint32_t i = 0; i < region.line_tiles(); ++i)
        if (region.slices_in || i == main.geo.root_i()) main.line_epilogue[i].push_back(mark_out);
      plan.region_sends.push_back(*slowest);
      continue;
    }
    if (last && prefill) {
      main.root_epilogue = {mark_out};
      continue;
    }
    const Task send = root_send(region, plan.regions[last ? 0 : r + 1], last ? kTokenIdBytes : vector_bytes,
                                last ? plan.workload.batch : 0);
    main.root_epilogue = {send, mark_out};
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
  std::vector<Task> tasks;
  for (const Region& region : plan.regions)
    for (const Block& block : region.blocks) assemble_block(block, interner, set, hw, tasks);
  const BlockGeometry& embedding = plan.regions[0].box;
  const uint64_t embedding_root =
      (uint64_t(embedding.wafer) * hw.grid_height + embedding.root_y()) * hw.grid_width + embedding.root_x();
  const uint64_t present = prefill ? set.iterations : std::min<uint64_t>(plan.workload.batch, set.iterations);
  for (uint64_t iteration = 0; iteration < present; ++iteration)
    set.injections.push_back(Injection{embedding_root, kTagInput, iteration});
}

void release_program_sources(Plan& plan) {
  for (Region& region : plan.regions)
    for (Block& block : region.blocks) {
      // Swapping with empty vectors frees their storage (clear() would keep it).
      std::vector<Task>().swap(block.root_prologue);
      std::vector<Task>().swap(block.root_epilogue);
      std::vector<std::vector<Task>>().swap(block.line_prologue);
      std::vector<std::vector<Task>>().swap(block.line_epilogue);
      block.dispatch_in.release();
      std::vector<Task>().swap(block.dispatch_below);
      std::vector<Task>().swap(block.dispatch_below_last);
      std::vector<Task>().swap(block.root_combine);
      block.row_combine.release();
    }
}

}  // namespace wafersim::mapping
