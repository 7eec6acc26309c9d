// The layer-partitioning compiler: sizes and places regions, builds their
// blocks, checks every tile's SRAM and turns the blocks into tile programs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "mapping/context_steps.h"
#include "mapping/kv_groups.h"
#include "mapping/layout.h"
#include "mapping/measure_region.h"
#include "mapping/plan.h"
#include "mapping/programs.h"
#include "mapping/tile_sram.h"
#include "models/config/error.h"
#include "models/field_list.h"
#include "models/sram_ledger.h"
#include "models/task_builders.h"
#include "models/wafer_repairs.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

// The plan runs on the repaired wafer's logical grid, which holds no dead tile
// by construction; a task on one is the compiler's fault, not the input's.
void refuse_dead_tiles(const Plan& plan) {
  if (!plan.hw.repairs) return;
  const std::string dead = plan.hw.repairs->task_on_dead_tile(plan.programs);
  if (!dead.empty()) throw std::logic_error("the plan uses a dead tile: " + dead);
}

using workloads::ModelSpec;
using workloads::WorkloadSpec;

Plan choose_plan(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                 const MappingOptions& options);

// Whether a refusal says how many wafers would do, which takes another
// compile: not for a trial whose refusal the caller catches and drops.
enum class Refusal { Explained, Unexplained };

std::vector<RegionNeed> region_needs(const ModelSpec& model, uint64_t max_context, uint32_t kv_head_copies) {
  std::vector<RegionNeed> needs;
  auto add = [&](RegionKind kind, int32_t layer) {
    RegionNeed need;
    need.kind = kind;
    need.layer = layer;
    need.bytes =
        region_weight_bytes(model, kind, layer) + region_kv_bytes(model, kind, layer, max_context, kv_head_copies);
    need.min_height = 1;
    needs.push_back(std::move(need));
  };
  add(RegionKind::Embedding, -1);
  for (uint32_t layer = 0; layer < model.n_layers; ++layer)
    add(model.is_moe_layer(layer) ? RegionKind::Moe : RegionKind::Dense, int32_t(layer));
  add(RegionKind::Head, -1);
  return needs;
}

bool is_layer(RegionKind kind) { return kind == RegionKind::Dense || kind == RegionKind::Moe; }

std::string bytes_text(uint64_t bytes) {
  if (bytes >= 1000000000) return fmt::format("{:.2f} GB", double(bytes) / 1e9);
  if (bytes >= 1000000) return fmt::format("{:.2f} MB", double(bytes) / 1e6);
  return fmt::format("{} bytes", bytes);
}

// Totals for the report.
void sum_up(Plan& plan) {
  const ProgramSet& set = plan.programs;
  plan.tiles_total = set.tiles();
  uint64_t sram_sum = 0;
  plan.max_context_tokens = UINT64_MAX;
  for (const RegionStats& stats : plan.stats) {
    plan.tiles_used += stats.tiles;
    sram_sum += stats.sram_mean_bytes * stats.tiles;
    plan.max_context_tokens = std::min(plan.max_context_tokens, stats.max_context_tokens);
    plan.colors_peak = std::max(plan.colors_peak, stats.patterns_peak);
    plan.relays += stats.relayed_patterns;
  }
  plan.colors_peak += 1;  // the route from one region root to the next
  plan.sram_mean_bytes = plan.tiles_used ? sram_sum / plan.tiles_used : 0;
  plan.plan_bytes = set.tile_program.size() * sizeof(uint32_t) + set.tile_param.size() * sizeof(uint32_t);
  for (const Program& program : set.programs) plan.plan_bytes += program.tasks.size() * sizeof(Task);
}

// --- the layout search ---------------------------------------------------------

// The first guess of a tile's activation buffers, before any region is built:
// a few KiB, what most tiles keep. Tiles that keep more (the region root's
// stream buffer, gather nodes, attention tiles) get fewer weights (edge relief
// below), so a region's size follows its typical tile. The guess only sets the
// first heights; every tile is then measured exactly and a region that
// overflows is relieved or grown, so a low guess costs retries, not a wrong plan.
constexpr uint64_t kActivationBufferGuessBytes = 2048;
// The guess never sets aside more than 1/2 of a tile's usable SRAM, so a large
// mapping.stream_buffer_bytes still leaves a budget for weights and KV.
constexpr uint64_t kBufferGuessCapDivisor = 2;
// Strip counts tried go up to at least this many, however few strips the
// preferred aspect asks for: when tall regions do not pack in the preferred
// strips, narrower strips often do, without another wafer.
constexpr uint32_t kMinStripCountsTried = 16;
// With wafers: auto the compiler stops where hardware.wafers' range ends
// (models/hardware.cpp): a model needing more is refused, not compiled.
constexpr uint32_t kMaxWafers = 1024;
// Layouts tried after the first. Each failed one adds a wafer or grows a
// region that overflowed, so real models need a handful; the bound turns a
// region that never stops overflowing into an error instead of a hang.
constexpr int kMaxLayoutRetries = 200;
// Edge relief: rounds of refining the shares, and a column's weight before any
// (large, so that integer shares are fine-grained).
constexpr int kReliefRounds = 4;
constexpr uint64_t kEvenColumnWeight = 1000000;

// A need for at least one more row of `box`'s width than the box had.
uint64_t one_row_more(const BlockGeometry& box) { return box.tiles() + box.width_x(); }

// compile_plan in named steps: estimate the region heights, find the fewest
// wafers, then try layouts, building every region and growing the ones whose
// fullest tile overflows, until one layout fits every tile.
class PlanCompiler {
 public:
  PlanCompiler(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
               const MappingOptions& options, Refusal refusal = Refusal::Explained)
      : max_context_(workload.max_context()), refusal_(refusal) {
    plan_.hw = hw;
    plan_.model = model;
    plan_.workload = workload;
    plan_.options = options;
    usable_ = plan_.hw.usable_sram_bytes();
    colors_available_ = plan_.hw.fabric.colors - plan_.hw.fabric.colors_reserved;
    tile_budget_ = first_tile_budget();
    if (plan_.options.kv_head_copies == 0) plan_.options.kv_head_copies = auto_kv_head_copies();
    needs_ = region_needs(model, max_context_, plan_.options.kv_head_copies);
    if (plan_.options.multicast_axis_auto) plan_.options.multicast_along_x = !hands_off_slices();
    for (const RegionNeed& need : needs_) total_bytes_ += need.bytes;
    for (const RegionNeed& need : needs_) weight_bytes_ += region_weight_bytes(model, need.kind, need.layer);
  }

  // mapping.kv_head_copies, resolved.
  uint32_t kv_head_copies() const { return plan_.options.kv_head_copies; }
  // A lower bound on the wafers the plan needs with one copy of each KV head (0: none holds it).
  uint32_t wafers_at_least() const { return lower_bound_wafers(1); }

  Plan compile() {
    uint32_t wafers = starting_wafers();
    RegionContext context{&plan_.hw, &plan_.model, &plan_.options, colors_available_};
    context.max_context = max_context_;
    context.experts_per_row = plan_.options.moe_experts_per_row;
    for (int retry = 0;;) {
      const Layout layout = place(wafers);
      if (layout.boxes.empty()) {
        if (hw().wafers > 0) does_not_fit(wafers);
        // More wafers help only while every region fits a wafer at some strip width.
        if (!every_region_fits_a_strip()) region_taller_than_a_wafer();
        if (wafers >= kMaxWafers) more_wafers_than_allowed(wafers + 1);
        ++wafers;
        continue;
      }
      repair_wafers(wafers);
      if (build_regions(context, layout)) {
        plan_.strips = layout.strips;
        break;
      }
      if (++retry > kMaxLayoutRetries) throw std::logic_error("the compiler found no layout that fits every tile");
      plan_.sram_peak_bytes = 0;
    }
    plan_.hw.wafers = wafers;

    connect_regions(plan_);
    return std::move(plan_);
  }

 private:
  const HardwareSpec& hw() const { return plan_.hw; }

  // Refuses wafers the spares could not repair; the fabric charges the
  // detours of `wafers` repaired wafers from here on (the regions' steps copy it).
  void repair_wafers(uint32_t wafers) {
    if (!hw().repairs) return;
    if (const std::optional<std::string> shortfall = hw().repairs->shortfall(wafers)) throw DoesNotFitError(*shortfall);
    plan_.hw.fabric.detours = hw().repairs->detours(wafers);
  }

  // A tile holds its share of the region's bytes in what is left after
  // activation buffers (guessed here, checked per tile once built).
  uint64_t first_tile_budget() const {
    return usable_ - std::min<uint64_t>(usable_ / kBufferGuessCapDivisor, kActivationBufferGuessBytes);
  }

  // mapping.kv_head_copies: auto: the most copies of each KV head's cache
  // (a divisor of the query heads per KV head) whose bytes keep the wafers'
  // lower bound where one copy puts it (or within the configured wafers);
  // with a fixed layer grid, whose layer regions still fit its tiles at the
  // estimated budget. Copies speed attention up only; SRAM is what they cost.
  uint32_t auto_kv_head_copies() const {
    const ModelSpec& m = plan_.model;
    const MappingOptions& options = plan_.options;
    if (options.dataflow != Dataflow::Distributed || options.attention != AttentionLayout::Groups) return 1;
    if (m.cached_kv_heads() == 0 || m.n_heads % m.cached_kv_heads() != 0) return 1;
    auto block_holds = [&](uint32_t copies) {
      const uint64_t block_bytes = uint64_t(options.layer_columns) * options.layer_rows * tile_budget_;
      const std::vector<RegionNeed> needs = region_needs(m, max_context_, copies);
      return std::all_of(needs.begin(), needs.end(),
                         [&](const RegionNeed& need) { return !is_layer(need.kind) || need.bytes <= block_bytes; });
    };
    const uint32_t wafers = hw().wafers > 0 ? hw().wafers : lower_bound_wafers(1);
    if (wafers == 0) return 1;  // does not fit at all: the layout search says so
    auto fits = [&](uint32_t copies) {
      if (options.fixed_layer_grid()) return block_holds(copies);
      const uint32_t needed = lower_bound_wafers(copies);
      return needed > 0 && needed <= wafers;
    };
    uint32_t copies = mapping::kv_head_copies(m.cached_kv_heads(), m.n_heads, UINT32_MAX, UINT32_MAX);
    while (copies > 1 && !fits(copies))
      copies = mapping::kv_head_copies(m.cached_kv_heads(), m.n_heads, UINT32_MAX, copies - 1);
    return copies;
  }

  // Wafers as starting_wafers() bounds them, with `copies` of each KV head's cache.
  uint32_t lower_bound_wafers(uint32_t copies) const {
    std::vector<RegionNeed> needs = region_needs(plan_.model, max_context_, copies);
    for (RegionNeed& need : needs) need.min_height = min_height_for(need.bytes, hw().grid_width, tile_budget_);
    return wafers_needed(needs, hw(), 1);
  }

  // Heights in strips of a given width: enough for the bytes at the estimated
  // budget, and for what earlier builds of the region showed it needs.
  std::vector<RegionNeed> sized_for(uint32_t strip_width) const {
    std::vector<RegionNeed> sized = needs_;
    for (RegionNeed& need : sized) {
      const auto learnt = need.min_tiles_at_width.find(strip_width);
      const uint64_t min_tiles = learnt == need.min_tiles_at_width.end() ? 0 : learnt->second;
      need.min_height = std::max(uint32_t((min_tiles + strip_width - 1) / strip_width),
                                 min_height_for(need.bytes, strip_width, tile_budget_));
      if (fixed_layer(need)) need.min_height = plan_.options.layer_rows;
    }
    return sized;
  }

  // The wafer count to try first: the configured one, or with wafers: auto a
  // lower bound (full-width regions at the estimated tile budget).
  uint32_t starting_wafers() {
    check_layer_grid();
    at_least_ = wafers_needed(sized_for(hw().grid_width), hw(), 1);
    if (at_least_ == 0) does_not_fit(std::max<uint32_t>(hw().wafers, 1));
    if (at_least_ > kMaxWafers) more_wafers_than_allowed(at_least_);
    const uint32_t wafers = hw().wafers > 0 ? hw().wafers : at_least_;
    if (wafers < at_least_) does_not_fit(wafers);
    return wafers;
  }

  // Strip counts to try on this many wafers, nearest the preferred aspect first.
  std::vector<uint32_t> strip_candidates(uint32_t wafers) const {
    const uint32_t preferred = choose_strips(hw(), plan_.options, (needs_.size() + wafers - 1) / wafers);
    if (plan_.options.fixed_layer_grid()) return {hw().grid_width / plan_.options.layer_columns};
    if (plan_.options.strips > 0) return {preferred};
    std::vector<uint32_t> candidates;
    const uint32_t most = std::min<uint32_t>(hw().grid_width, std::max(kMinStripCountsTried, preferred));
    for (uint32_t strips = 1; strips <= most; ++strips) candidates.push_back(strips);
    std::stable_sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
      return std::abs(std::log(double(a) / preferred)) < std::abs(std::log(double(b) / preferred));
    });
    return candidates;
  }

  // The first strip count whose layout packs on this many wafers; empty boxes
  // when none does.
  Layout place(uint32_t wafers) const {
    Layout layout;
    for (uint32_t strips : strip_candidates(wafers)) {
      layout = place_regions(sized_for(strip_width(hw(), plan_.options, strips)), hw(), plan_.options, wafers, strips);
      if (!layout.boxes.empty()) break;
    }
    return layout;
  }

  // Builds every region of the layout and checks every tile. Regions that do
  // not fit learn how many tiles they need at this strip width; true when
  // every region fit. A region like one measured before is built only once
  // every region is known to fit: most layouts tried do not.
  bool build_regions(const RegionContext& context, const Layout& layout) {
    plan_.regions.clear();
    plan_.stats.clear();
    struct Fitting {
      std::optional<Region> built;  // none: like one measured before, built once every region fits
      RegionContext context;
      BlockGeometry box;  // where to build it
      RegionStats stats;
      FullestTile fullest;
    };
    std::vector<Fitting> fitting(needs_.size());
    bool grown = false;
    for (size_t r = 0; r < needs_.size(); ++r) {
      const BlockGeometry& box = layout.boxes[r];
      RegionContext region_context = context;
      region_context.slices_in = r > 0 && slices_handoff(plan_.options, needs_[r - 1].kind, needs_[r].kind);
      region_context.slices_out =
          r + 1 < needs_.size() && slices_handoff(plan_.options, needs_[r].kind, needs_[r + 1].kind);
      // A region like one built before, in a box of the same shape, builds and
      // measures alike (the last layer's prefill ends apart from the others').
      const bool last_layer = r + 2 == needs_.size();
      std::vector<uint64_t> key = region_timing_class(plan_.model, needs_[r].kind, needs_[r].layer, box,
                                                      region_context.slices_in, region_context.slices_out);
      key.push_back(plan_.workload.prefill && last_layer);
      if (const auto known = outcomes_.find(key); known != outcomes_.end()) {
        const BuildOutcome& outcome = known->second;
        const FullestTile fullest = mapping::moved(outcome.fullest, outcome.box, box);
        if (outcome.fits) {
          region_context.experts_per_row = outcome.experts_per_row;
          fitting[r] = Fitting{std::nullopt, region_context, moved(outcome.box, box), outcome.stats, fullest};
        } else {
          grow(r, layout.strip_width, region_name(needs_[r].kind, needs_[r].layer), box, outcome.stats, fullest);
          grown = true;
        }
        continue;
      }
      Region region;
      try {
        region = build_region(region_context, needs_[r].kind, needs_[r].layer, box);
      } catch (const TooFewRows&) {
        if (fixed_layer(needs_[r])) layer_grid_too_small(box, "too few rows for its experts");
        overflow_ = fmt::format("; in the last layout tried, {} had too few rows ({}) for its experts",
                                region_label(needs_[r]), box.height_y());
        overflow_of_[r] = overflow_;
        needs_[r].min_tiles_at_width[layout.strip_width] = one_row_more(box);
        grown = true;
        continue;
      }
      FullestTile fullest;
      RegionStats stats =
          measure_region(region, hw(), max_context_, plan_.options.stream_buffer_bytes, colors_available_, &fullest);
      if (stats.sram_peak_bytes > hw().tile.sram_bytes)
        relieve_edges(region_context, needs_[r], region, stats, fullest);
      // The root dataflow stays the ablation it was: near-square expert blocks.
      if (needs_[r].kind == RegionKind::Moe && region_context.experts_per_row == 0 &&
          plan_.options.dataflow == Dataflow::Distributed)
        choose_experts_per_row(region_context, needs_[r], region, stats, fullest);
      bool fits = stats.sram_peak_bytes <= hw().tile.sram_bytes;
      if (fits && plan_.workload.prefill && plan_.options.prefill_chunk != PrefillChunk::AsAsked)
        fits = fits_one_token_prefill(region_context, needs_[r], last_layer, region, stats, fullest);
      outcomes_[key] = BuildOutcome{region.box, stats, fullest, fits, region.experts_per_row};
      if (!fits) {
        grow(r, layout.strip_width, region.name, box, stats, fullest);
        grown = true;
        continue;
      }
      fitting[r] = Fitting{std::move(region), region_context, box, stats, fullest};
    }
    if (grown) return false;
    for (size_t r = 0; r < needs_.size(); ++r) {
      Fitting& f = fitting[r];
      keep(f.built ? std::move(*f.built) : build_region(f.context, needs_[r].kind, needs_[r].layer, f.box), f.stats,
           layout.boxes[r], f.fullest);
    }
    return true;
  }

  // What building and measuring a region in a box gave (after edge relief):
  // the same for every region of its timing class in a box of the same shape,
  // wherever that sits, so a model of many alike layers measures each kind once.
  struct BuildOutcome {
    BlockGeometry box;  // with the relief's shares, where it was built
    RegionStats stats;
    FullestTile fullest;
    bool fits = false;
    uint32_t experts_per_row = 0;  // MoE: as built
  };

  // mapping.moe_experts_per_row: auto. Beside the near-square expert blocks
  // `region` was built with, rows of fewer and more experts (wider and
  // narrower blocks), each timed by closed form with every expert routed at
  // the workload's largest context (the busiest the layer gets); the fastest
  // that fits is kept, the near-square blocks on a tie (docs/MAPPING.md).
  void choose_experts_per_row(RegionContext context, const RegionNeed& need, Region& region, RegionStats& stats,
                              FullestTile& fullest) const {
    const EveryExpertAt busiest(max_context_);
    const uint32_t sram = hw().tile.sram_bytes;
    uint64_t best = stats.sram_peak_bytes <= sram ? region.finish(Timed{}, busiest, 0).cycle : UINT64_MAX;
    const uint32_t near_square = region.experts_per_row;
    std::vector<uint32_t> tried = {near_square};
    for (const double scale : kExpertRowScales) {
      context.experts_per_row = uint32_t(std::max(1.0, std::round(near_square * scale)));
      Region candidate;
      try {
        candidate = build_region(context, need.kind, need.layer, region.box);
      } catch (const TooFewRows&) {
        continue;
      }
      if (std::find(tried.begin(), tried.end(), candidate.experts_per_row) != tried.end()) continue;
      tried.push_back(candidate.experts_per_row);
      FullestTile candidate_fullest;
      const RegionStats candidate_stats = measure_region(
          candidate, hw(), max_context_, plan_.options.stream_buffer_bytes, colors_available_, &candidate_fullest);
      if (candidate_stats.sram_peak_bytes > sram) continue;
      const uint64_t cycles = candidate.finish(Timed{}, busiest, 0).cycle;
      if (cycles >= best) continue;
      best = cycles;
      region = std::move(candidate);
      stats = candidate_stats;
      fullest = candidate_fullest;
    }
  }
  // The same shape and shares at `to`'s place; a tile moved with its box.
  static BlockGeometry moved(BlockGeometry shape, const BlockGeometry& to) {
    shape.wafer = to.wafer;
    shape.x0 = to.x0;
    shape.y0 = to.y0;
    return shape;
  }
  // Region r overflowed: the next layout gives it the tiles it needs.
  void grow(size_t r, uint32_t strip_width, const std::string& name, const BlockGeometry& box, const RegionStats& stats,
            const FullestTile& fullest) {
    if (fixed_layer(needs_[r])) layer_grid_too_small(box, overflow_report(fullest, hw()));
    needs_[r].min_tiles_at_width[strip_width] = tiles_to_fit(name, box, stats, fullest);
    overflow_of_[r] = overflow_;
  }

  // Edge relief: tiles that keep more activation buffers or KV than others
  // (the root row and column, attention tiles) take fewer of the GEMV weights,
  // so a region fits without growing for a few of its tiles. The columns' shares
  // follow the room each column's row-1 tile leaves (every tile of row 1 ends
  // near the mean), then row 0 sheds what its fullest tile holds beyond row 1's.
  // Rounds refine the shares on the rebuilt region; the result is kept when the
  // fullest tile fits, or else kept as the better measure for growing it.
  void relieve_edges(const RegionContext& context, const RegionNeed& need, Region& region, RegionStats& stats,
                     FullestTile& fullest) const {
    if (region.blocks.size() != 1) return;  // MoE: expert blocks split their weights evenly
    BlockGeometry box = region.box;
    if (box.rows < 2 || box.cols < 2) return;
    const uint64_t reserve = hw().tile.runtime_reserved_bytes, stream = plan_.options.stream_buffer_bytes;
    std::vector<uint64_t> column_weight(box.cols, kEvenColumnWeight);
    // "Row 0" below is the root row, "row 1" the next one away from the block's corner (or before it, at the end).
    const uint32_t root_row = region.box.root_i(), next_row = root_row + 1 < box.rows ? root_row + 1 : root_row - 1;
    for (int round = 0; round < kReliefRounds; ++round) {
      const Block& block = region.blocks[0];
      std::vector<TileSram> row0(box.cols), row1(box.cols);
      for (uint32_t j = 0; j < box.cols; ++j) {
        row0[j] = tile_sram(block, root_row, j, max_context_, stream);
        row1[j] = tile_sram(block, next_row, j, max_context_, stream);
      }
      auto other = [&](const TileSram& t) { return reserve + t.kv + t.activations; };
      uint64_t sum = 0;
      for (uint32_t j = 0; j < box.cols; ++j) sum += row1[j].weights + other(row1[j]);
      const uint64_t target = sum / box.cols;
      for (uint32_t j = 0; j < box.cols; ++j) {
        const uint64_t room = target > other(row1[j]) ? target - other(row1[j]) : 0;
        if (row1[j].weights > 0) column_weight[j] = std::max<uint64_t>(1, column_weight[j] * room / row1[j].weights);
      }
      // Row 0 against row 1, at its worst column.
      double row0_factor = std::numeric_limits<double>::infinity();
      for (uint32_t j = 0; j < box.cols; ++j) {
        if (row0[j].weights == 0) continue;
        const double used0 = double(row0[j].weights + other(row0[j])), used1 = double(row1[j].weights + other(row1[j]));
        row0_factor = std::min(row0_factor, (double(row0[j].weights) - (used0 - used1)) / double(row0[j].weights));
      }
      if (std::isfinite(row0_factor))
        box.row0_permille = uint32_t(std::clamp(std::floor(box.row0_permille * row0_factor), 1.0, 1000.0));
      box.relieved_row = root_row;
      box.set_column_weights(column_weight);
      Region relieved = build_region(context, need.kind, need.layer, box);
      FullestTile relieved_fullest;
      const RegionStats relieved_stats =
          measure_region(relieved, hw(), max_context_, stream, colors_available_, &relieved_fullest);
      if (relieved_stats.sram_peak_bytes >= stats.sram_peak_bytes) return;  // no better: stop
      region = std::move(relieved);
      stats = relieved_stats;
      fullest = relieved_fullest;
      if (stats.sram_peak_bytes <= hw().tile.sram_bytes) return;
    }
  }

  // A prefill's buffers grow with its chunk (prefill_sram_fit), but a one-token
  // chunk must fit wherever decode does, or a plan that decodes could not take
  // its prompt: the region rebuilt for it in the same box is measured too. If
  // it overflows, `stats` and `fullest` take the prefill's peak and fullest
  // tile, which the region then grows to fit.
  bool fits_one_token_prefill(const RegionContext& context, const RegionNeed& need, bool last_layer,
                              const Region& region, RegionStats& stats, FullestTile& fullest) const {
    RegionContext one_token =
        prefill_region_context(context, last_layer, need.kind == RegionKind::Moe ? 1 : 0, plan_.workload.prompt_tokens);
    one_token.experts_per_row = region.experts_per_row;
    FullestTile prefill_fullest;
    const RegionStats prefill =
        measure_region(build_region(one_token, need.kind, need.layer, region.box), hw(), max_context_,
                       plan_.options.stream_buffer_bytes, colors_available_, &prefill_fullest);
    if (prefill.sram_peak_bytes <= hw().tile.sram_bytes) return true;
    stats.sram_peak_bytes = prefill.sram_peak_bytes;
    fullest = prefill_fullest;
    return false;
  }

  // Tiles an overflowing region needs: weights and KV shrink with the region's
  // height, activation buffers do not; at least one row more.
  uint64_t tiles_to_fit(const std::string& name, const BlockGeometry& box, const RegionStats& stats,
                        const FullestTile& fullest) {
    const uint64_t fixed = hw().tile.runtime_reserved_bytes + fullest.sram.activations;
    overflow_ = "; in the last layout tried, " + name + ": " + overflow_report(fullest, hw());
    if (fixed + 1 >= hw().tile.sram_bytes) no_tile_fits();  // not one byte left for weights
    const double shrink = double(stats.sram_peak_bytes - fixed) / double(hw().tile.sram_bytes - fixed);
    return std::max<uint64_t>(one_row_more(box), uint64_t(std::ceil(double(box.tiles()) * shrink)));
  }

  void keep(Region region, const RegionStats& stats, const BlockGeometry& box, const FullestTile& fullest) {
    if (stats.sram_peak_bytes > plan_.sram_peak_bytes) {
      plan_.sram_peak_bytes = stats.sram_peak_bytes;
      plan_.sram_peak_wafer = box.wafer;
      plan_.sram_peak_x = fullest.x;
      plan_.sram_peak_y = fullest.y;
    }
    plan_.regions.push_back(std::move(region));
    plan_.stats.push_back(stats);
  }

  [[noreturn]] void does_not_fit(uint32_t wafers) const {
    const HardwareSpec& hw = this->hw();
    const ModelSpec& model = plan_.model;
    // Say how many wafers would do: the compiler's own answer with wafers: auto.
    std::string fit = "; one of its regions is larger than a wafer";
    if (at_least_ > 0 && hw.wafers > 0 && refusal_ == Refusal::Explained) {
      HardwareSpec any_count = hw;
      any_count.wafers = 0;
      fit = fmt::format("; it fits on {} wafer(s)",
                        choose_plan(any_count, model, plan_.workload, plan_.options).hw.wafers);
    }
    throw DoesNotFitError(fmt::format(
        "{} needs {} (weights {} + KV cache {} at {} tokens) but {} wafer(s) of {} hold {} usable "
        "({} tiles x {} B){}{}",
        model.name, bytes_text(total_bytes_), bytes_text(weight_bytes_), bytes_text(total_bytes_ - weight_bytes_),
        max_context_, wafers, hw.name, bytes_text(uint64_t(wafers) * hw.tiles_per_wafer() * usable_),
        uint64_t(wafers) * hw.tiles_per_wafer(), usable_, fit, overflow_));
  }

  // True when some strip width tried holds every region within a wafer's rows.
  bool every_region_fits_a_strip() const {
    for (uint32_t strips : strip_candidates(1)) {
      const std::vector<RegionNeed> sized = sized_for(strip_width(hw(), plan_.options, strips));
      if (std::all_of(sized.begin(), sized.end(),
                      [&](const RegionNeed& need) { return need.min_height <= hw().grid_height; }))
        return true;
    }
    return false;
  }

  // A region needs more rows than a wafer has at every strip width tried:
  // named with the reason its last build gave.
  [[noreturn]] void region_taller_than_a_wafer() const {
    const std::vector<uint32_t> candidates = strip_candidates(1);
    const uint32_t width = strip_width(hw(), plan_.options, candidates.front());
    const std::vector<RegionNeed> sized = sized_for(width);
    size_t tallest = 0;
    for (size_t r = 0; r < sized.size(); ++r)
      if (sized[r].min_height > sized[tallest].min_height) tallest = r;
    const std::string strips = candidates.size() == 1
                                   ? fmt::format("in {} strip(s) of {} tiles", candidates.front(), width)
                                   : fmt::format("in strips of any width from 1 to {} strip(s) per wafer",
                                                 *std::max_element(candidates.begin(), candidates.end()));
    const auto built = overflow_of_.find(tallest);
    const std::string reason = built != overflow_of_.end()
                                   ? built->second
                                   : fmt::format("; its weights and KV cache ({}) alone need {} rows",
                                                 bytes_text(sized[tallest].bytes), sized[tallest].min_height);
    throw DoesNotFitError(
        fmt::format("{}: {} needs more than the {} rows of a {} wafer {}, and more wafers do not "
                    "help (a region lies on one wafer){}{}",
                    plan_.model.name, region_label(sized[tallest]), hw().grid_height, hw().name, strips, reason,
                    default_mapping_hint()));
  }

  [[noreturn]] void more_wafers_than_allowed(uint32_t wafers) const {
    throw DoesNotFitError(
        fmt::format("{} needs at least {} wafers of {} (weights {} + KV cache {} at {} tokens), more than the {} an "
                    "experiment may join",
                    plan_.model.name, wafers, hw().name, bytes_text(weight_bytes_),
                    bytes_text(total_bytes_ - weight_bytes_), max_context_, kMaxWafers));
  }

  static std::string region_label(const RegionNeed& need) {
    if (need.kind == RegionKind::Embedding) return "the embedding";
    if (need.kind == RegionKind::Head) return "the LM head";
    return fmt::format("layer {}", need.layer);
  }

  // What would fit: the same experiment with the layout knobs at their defaults, when any differs.
  std::string default_mapping_hint() const {
    const MappingOptions defaults;
    MappingOptions reset = plan_.options;
    std::vector<std::string> changed;
    if (reset.strips != defaults.strips) changed.push_back("mapping.strips: 0"), reset.strips = defaults.strips;
    if (reset.moe_attention_share != defaults.moe_attention_share) {
      changed.push_back("mapping.moe_attention_share: 0");
      reset.moe_attention_share = defaults.moe_attention_share;
    }
    if (reset.region_aspect != defaults.region_aspect) {
      changed.push_back("mapping.region_aspect: 1");
      reset.region_aspect = defaults.region_aspect;
    }
    if (changed.empty()) return "";
    std::string knobs;
    for (const std::string& knob : changed) knobs += (knobs.empty() ? "" : " and ") + knob;
    HardwareSpec any_count = hw();
    any_count.wafers = 0;
    try {
      const Plan plan = choose_plan(any_count, plan_.model, plan_.workload, reset);
      return fmt::format("; with {} it fits on {} wafer(s)", knobs, plan.hw.wafers);
    } catch (const DoesNotFitError&) {
      return fmt::format("; it does not fit with {} either", knobs);
    }
  }

  // Whether some region hands slices on to the next (mapping.handoff).
  bool hands_off_slices() const {
    for (size_t r = 0; r + 1 < needs_.size(); ++r)
      if (slices_handoff(plan_.options, needs_[r].kind, needs_[r + 1].kind)) return true;
    return false;
  }

  // mapping.layer_grid gives every layer region that many tiles, whatever it needs.
  bool fixed_layer(const RegionNeed& need) const { return plan_.options.fixed_layer_grid() && is_layer(need.kind); }

  // With a fixed layer grid every strip is that wide: the embedding and the LM
  // head must fit such a strip too, or no wafer count would ever do.
  void check_layer_grid() const {
    const MappingOptions& options = plan_.options;
    if (!options.fixed_layer_grid()) return;
    if (options.layer_columns > hw().grid_width || options.layer_rows > hw().grid_height)
      throw std::invalid_argument("mapping.layer_grid larger than the wafer reached the compiler");  // config checks it
    for (const RegionNeed& need : sized_for(options.layer_columns))
      if (need.min_height > hw().grid_height)
        throw DoesNotFitError(fmt::format(
            "{}: with mapping.layer_grid of {} x {} tiles every strip is {} tiles wide, and the {} needs {} rows of "
            "such a strip, more than a {} wafer's {}",
            plan_.model.name, options.layer_columns, options.layer_rows, options.layer_columns,
            need.kind == RegionKind::Embedding ? "embedding" : "LM head", need.min_height, hw().name,
            hw().grid_height));
  }

  [[noreturn]] void layer_grid_too_small(const BlockGeometry& box, const std::string& why) const {
    throw DoesNotFitError(fmt::format("{}: a layer does not fit mapping.layer_grid of {} x {} tiles: {}",
                                      plan_.model.name, box.width_x(), box.height_y(), why));
  }

  // A tile whose buffers alone fill it: more tiles or wafers cannot help.
  [[noreturn]] void no_tile_fits() const {
    throw DoesNotFitError(
        fmt::format("{} does not fit any number of {} wafers{}", plan_.model.name, hw().name, overflow_));
  }

  Plan plan_;
  const uint64_t max_context_;
  const Refusal refusal_;
  uint64_t usable_ = 0;
  uint32_t colors_available_ = 0;
  std::vector<RegionNeed> needs_;
  uint64_t tile_budget_ = 0;
  uint64_t total_bytes_ = 0, weight_bytes_ = 0;
  uint32_t at_least_ = 0;                      // lower bound on the wafers; 0 when a region is larger than a wafer
  std::string overflow_;                       // the last tile found over capacity, for the messages
  std::map<size_t, std::string> overflow_of_;  // the same, per region that overflowed
  std::map<std::vector<uint64_t>, BuildOutcome> outcomes_;  // by the timing class of the region and its box
};

}  // namespace

namespace {

Plan compile_with_axis(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                       const MappingOptions& options, Refusal refusal = Refusal::Explained);

// Latent attention has one KV head for all the query heads: a group that
// attends with many of them keeps their queries and partials (about 2 KB per
// head) on every tile, which one copy of the cache cannot hold for
// DeepSeek-V3's 128 heads. So the copies go up from the bound's pick, each
// count dividing the query heads, until a plan fits; only the last count's
// refusal reaches the user.
Plan compile_latent_copies(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                           MappingOptions options) {
  for (;;) {
    uint32_t more = options.kv_head_copies + 1;
    while (more <= model.n_heads && model.n_heads % more != 0) ++more;
    if (more > model.n_heads) return compile_with_axis(hw, model, workload, options);
    try {
      return compile_with_axis(hw, model, workload, options, Refusal::Unexplained);
    } catch (const DoesNotFitError&) {
      options.kv_head_copies = more;
    }
  }
}

// The plan compile_plan takes, without its programs: the candidates it
// compares differ in wafers only, and a program set costs 8 bytes per tile of
// every wafer (gigabytes for hundreds of wafers), so only the chosen plan gets one.
Plan choose_plan(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                 const MappingOptions& options) {
  if (options.kv_head_copies != 0) return compile_with_axis(hw, model, workload, options);
  // kv_head_copies: auto. The copies come from a lower bound on the wafers,
  // but the layout found may need more wafers than one copy does: then fewer
  // copies are tried, down to one, and the first plan on no more wafers than
  // one copy needs is taken. Where the wafers are given and the copies do not
  // fit them, one copy is the plan.
  const PlanCompiler first(hw, model, workload, options);
  MappingOptions copies = options;
  copies.kv_head_copies = first.kv_head_copies();
  if (model.is_mla()) return compile_latent_copies(hw, model, workload, copies);
  if (copies.kv_head_copies == 1) return compile_with_axis(hw, model, workload, copies);
  MappingOptions one_copy = options;
  one_copy.kv_head_copies = 1;
  if (hw.wafers > 0) {
    try {
      return compile_with_axis(hw, model, workload, copies, Refusal::Unexplained);
    } catch (const DoesNotFitError&) {
      return compile_with_axis(hw, model, workload, one_copy);
    }
  }
  Plan plan = compile_with_axis(hw, model, workload, copies);
  if (plan.hw.wafers <= first.wafers_at_least()) return plan;
  Plan single = compile_with_axis(hw, model, workload, one_copy);
  while (plan.hw.wafers > single.hw.wafers) {
    copies.kv_head_copies =
        kv_head_copies(model.cached_kv_heads(), model.n_heads, UINT32_MAX, copies.kv_head_copies - 1);
    if (copies.kv_head_copies == 1) return single;
    plan = compile_with_axis(hw, model, workload, copies);
  }
  return plan;
}

}  // namespace

Plan compile_plan(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                  const MappingOptions& options) {
  Plan plan = choose_plan(hw, model, workload, options);
  build_programs(plan);
  refuse_dead_tiles(plan);
  sum_up(plan);
  // Once for every prefill plan made from this one: fastest_fitting times a few dozen prefills.
  if (workload.prefill && options.prefill_chunk != PrefillChunk::AsAsked)
    plan.chosen_prefill_chunk_tokens = prefill_chunk_tokens(plan);
  return plan;
}

namespace {

Plan compile_with_axis(const HardwareSpec& hw, const ModelSpec& model, const WorkloadSpec& workload,
                       const MappingOptions& options, Refusal refusal) {
  if (!options.multicast_axis_auto) return PlanCompiler(hw, model, workload, options, refusal).compile();
  // multicast_axis: auto prefers y where slices are handed on (PlanCompiler),
  // but along y a root row is a strip wide and its tiles keep longer buffers:
  // where the plan fits along x only, or on fewer wafers, x is taken.
  MappingOptions along_x = options;
  along_x.multicast_axis_auto = false;
  along_x.multicast_along_x = true;
  Plan preferred;
  try {
    // Where it would be refused, along x is tried and refuses instead.
    const Refusal first_refusal = options.slices_handoff() ? Refusal::Unexplained : refusal;
    preferred = PlanCompiler(hw, model, workload, options, first_refusal).compile();
  } catch (const DoesNotFitError&) {
    if (!options.slices_handoff()) throw;  // it was along x already
    return PlanCompiler(hw, model, workload, along_x, refusal).compile();
  }
  if (preferred.options.multicast_along_x || hw.wafers > 0 || preferred.hw.wafers == 1) return preferred;
  HardwareSpec fewer = hw;
  fewer.wafers = preferred.hw.wafers - 1;
  try {
    return PlanCompiler(fewer, model, workload, along_x, Refusal::Unexplained).compile();
  } catch (const DoesNotFitError&) {
    return preferred;
  }
}

}  // namespace

}  // namespace wafersim::mapping
