// What `wafersim map` reports: the plan's regions, tiles, SRAM and options, as JSON and as a table.
#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/wafer_repairs.h"
#include "sim/experiment/version.h"
#include "sim/reports/config_json.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"
#include "sim/reports/speculative_map.h"

namespace wafersim::reports {

namespace {

// Where a layer's vectors live between its steps.
const char* moe_combine_text(mapping::MoeCombine combine) {
  switch (combine) {
    case mapping::MoeCombine::Tree:
      return "experts' results streamed along rows and up a column, one vector to the root (mapping.moe_combine)";
    case mapping::MoeCombine::Columns:
      return "input dispatched and results combined as slices along the columns of the expert places, each "
             "column's sum to the root-column tiles holding its elements (mapping.moe_combine)";
    case mapping::MoeCombine::Root: break;
  }
  return "every result sent to the layer root (mapping.moe_combine)";
}

std::string slices_text(const mapping::MappingOptions& options) {
  if (options.dataflow == mapping::Dataflow::Root) return "at each region's root tile between steps";
  if (options.slices_handoff())
    return "slices on each region's root column (residual) and root row (q/k/v, MLP); handed on as slices between "
           "regions";
  return "slices on each region's root column (residual) and root row (q/k/v, MLP); root at the region's ends";
}

std::string megabytes(uint64_t bytes) { return fmt::format("{:.1f}", double(bytes) / 1e6); }

// An MoE layer region's blocks: the attention rows on top, the expert blocks in rows below them.
struct ExpertBlocks {
  uint32_t attention_rows = 0, rows = 0, rows_of_blocks = 0, columns_min = 0, columns_max = 0;
};
ExpertBlocks expert_blocks(const mapping::Region& region) {
  ExpertBlocks out;
  out.attention_rows = region.blocks[0].geo.rows;
  for (size_t b = 1; b < region.blocks.size(); ++b) {
    const mapping::BlockGeometry& g = region.blocks[b].geo;
    out.rows = g.rows;
    out.columns_min = b == 1 ? g.cols : std::min(out.columns_min, g.cols);
    out.columns_max = std::max(out.columns_max, g.cols);
  }
  out.rows_of_blocks = out.rows == 0 ? 0 : (region.box.rows - out.attention_rows) / out.rows;
  return out;
}

// The compiler's "no limit" (a region that holds no KV cache: embedding, LM head)
// is null in JSON and "unbounded" in the table, never its UINT64_MAX sentinel.
bool unbounded(uint64_t max_context_tokens) { return max_context_tokens == UINT64_MAX; }
nlohmann::json context_json(uint64_t max_context_tokens) {
  return unbounded(max_context_tokens) ? nlohmann::json(nullptr) : nlohmann::json(max_context_tokens);
}
std::string context_text(uint64_t max_context_tokens) {
  return unbounded(max_context_tokens) ? "unbounded" : std::to_string(max_context_tokens);
}

std::string lines_text(const std::vector<uint32_t>& lines) {
  return lines.empty() ? "none" : fmt::format("{}", fmt::join(lines, ", "));
}

// The repairs under the plan (docs/DEFECTS.md): per wafer, the physical lines
// the logical grid skips and, under the shift scheme, the rows that skip
// single tiles; and the run's figures over its wafers.
nlohmann::json repair_json(const HardwareSpec& hw) {
  const RepairSummary summary = hw.repairs->summary(hw.wafers);
  nlohmann::json wafers = nlohmann::json::array();
  for (uint32_t w = 0; w < std::max<uint32_t>(hw.wafers, 1); ++w) {
    const WaferRepair& repair = hw.repairs->wafer(w);
    nlohmann::json wafer = {{"dead_tiles", repair.defects.dead_tiles},
                            {"dead_links", repair.defects.dead_links},
                            {"retired_rows", repair.retired_rows},
                            {"retired_columns", repair.retired_columns}};
    if (repair.scheme == RepairScheme::Shift) wafer["shifted_rows"] = repair.shifted_rows();
    wafers.push_back(std::move(wafer));
  }
  const WaferRepair& first = hw.repairs->wafer(0);
  return {{"scheme", first.scheme == RepairScheme::Shift ? "shift" : "lines"},
          {"dead_tiles", summary.dead_tiles},
          {"dead_links", summary.dead_links},
          {"physical_grid", {first.defects.width, first.defects.height}},
          {"route_extra_hops_max", summary.route_extra_hops_max},
          {"wafers", std::move(wafers)}};
}

// What the repair skipped, for the plan's table: one wafer's lines, or the most any wafer skipped.
std::string repair_text(const HardwareSpec& hw) {
  const RepairSummary summary = hw.repairs->summary(hw.wafers);
  const WaferRepair& first = hw.repairs->wafer(0);
  std::string skipped;
  if (hw.wafers > 1)
    skipped =
        fmt::format("over {} wafers (each its own, wafers in the JSON); up to {} rows and {} {} on one", hw.wafers,
                    summary.spare_rows_used, summary.spare_columns_used,
                    first.scheme == RepairScheme::Shift ? "spare columns reached by a shifted row" : "columns skipped");
  else if (first.scheme == RepairScheme::Shift)
    skipped =
        fmt::format("per wafer; physical rows {} skipped, {} rows shifted past their dead tiles (by up to {} columns)",
                    lines_text(first.retired_rows), first.shifted_rows(), first.spare_columns_used());
  else
    skipped = fmt::format("per wafer; physical rows {} and columns {} skipped", lines_text(first.retired_rows),
                          lines_text(first.retired_columns));
  return fmt::format("{}, routes up to {} hops longer (hardware.defects, docs/DEFECTS.md)", skipped,
                     summary.route_extra_hops_max);
}

// What `map` says of the prefill: the chunk it carries, the largest that fits, and its SRAM.
struct PrefillFigures {
  uint64_t chunk_tokens = 0, fitting_chunk_tokens = 0;
  mapping::PrefillSram sram;
};

nlohmann::json plan_json(const Experiment& experiment, const mapping::Plan& plan, double compile_seconds,
                         const PrefillFigures* prefill) {
  nlohmann::json regions = nlohmann::json::array();
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const mapping::Region& region = plan.regions[r];
    const mapping::RegionStats& stats = plan.stats[r];
    regions.push_back({{"name", region.name},
                       {"wafer", region.box.wafer},
                       {"x", region.box.x0},
                       {"y", region.box.y0},
                       {"width_tiles", region.box.width_x()},
                       {"height_tiles", region.box.height_y()},
                       {"tiles", stats.tiles},
                       {"blocks", region.blocks.size()},
                       {"weight_bytes", stats.weight_bytes},
                       {"kv_bytes", stats.kv_bytes},
                       {"sram_peak_bytes", stats.sram_peak_bytes},
                       {"sram_mean_bytes", stats.sram_mean_bytes},
                       {"max_context_tokens", context_json(stats.max_context_tokens)},
                       {"relays", stats.relayed_patterns},
                       {"handoff_in", region.slices_in ? "slices" : "root"},
                       {"handoff_out", region.slices_out ? "slices" : "root"}});
    if (region.blocks.size() > 1) {
      const ExpertBlocks experts = expert_blocks(region);
      regions.back()["attention_rows"] = experts.attention_rows;
      regions.back()["expert_block_rows"] = experts.rows;
      regions.back()["expert_block_columns"] = {experts.columns_min, experts.columns_max};
    }
  }
  nlohmann::json document = {{"fits", true},
                             {"model", section_label(experiment.config, "model", plan.model.name)},
                             {"hardware", section_label(experiment.config, "hardware", plan.hw.name)},
                             {"wafers", plan.hw.wafers},
                             {"strips", plan.strips},
                             {"dataflow", mapping::dataflow_name(plan.options.dataflow)},
                             {"reduction", mapping::reduction_name(plan.options.reduction)},
                             {"prefill_gemm", mapping::prefill_gemm_name(plan.options.prefill_gemm)},
                             {"moe_combine", mapping::moe_combine_name(plan.options.moe_combine)},
                             {"attention", mapping::attention_layout_name(plan.options.attention)},
                             {"prefill_attention", mapping::attention_layout_name(plan.options.prefill_attention)},
                             {"kv_head_copies", plan.options.kv_head_copies},
                             {"line_root", mapping::line_root_name(plan.options.line_root)},
                             {"handoff", mapping::handoff_name(plan.options.slices_handoff() ? mapping::Handoff::Slices
                                                                                             : mapping::Handoff::Root)},
                             {"multicast_axis", plan.options.multicast_along_x ? "x" : "y"},
                             {"reduce_fanin", plan.options.reduce_fanin},
                             {"ktree_levels", plan.options.ktree_levels},
                             {"partial_sum_dtype", to_string(plan.options.partial_sum)},
                             {"slices", slices_text(plan.options)},
                             {"tiles_used", plan.tiles_used},
                             {"tiles_total", plan.tiles_total},
                             {"sram_capacity_bytes", plan.hw.tile.sram_bytes},
                             {"sram_peak_bytes", plan.sram_peak_bytes},
                             {"sram_mean_bytes", plan.sram_mean_bytes},
                             {"max_context_tokens", context_json(plan.max_context_tokens)},
                             {"colors_peak", plan.colors_peak},
                             {"colors_available", plan.hw.fabric.colors - plan.hw.fabric.colors_reserved},
                             {"relays", plan.relays},
                             {"programs", plan.programs.programs.size()},
                             {"plan_bytes", plan.plan_bytes},
                             {"plan_bytes_per_tile", double(plan.plan_bytes) / double(plan.tiles_total)},
                             {"compile_seconds", compile_seconds},
                             {"regions", regions},
                             {"config_hash", experiment.config.hash()},
                             {"config", config_json(experiment.config)},
                             {"version", version()}};
  if (plan.hw.repairs) document["defects"] = repair_json(plan.hw);
  if (prefill) {
    const mapping::PrefillSram& sram = prefill->sram;
    document["prefill"] = {{"chunk_tokens", prefill->chunk_tokens},
                           {"chunk_tokens_asked", plan.workload.prefill_chunk_tokens},
                           {"chunk_choice", mapping::prefill_chunk_name(plan.options.prefill_chunk)},
                           {"fitting_chunk_tokens", prefill->fitting_chunk_tokens},
                           {"fits_sram", sram.peak_bytes <= plan.hw.tile.sram_bytes},
                           {"sram_peak_bytes", sram.peak_bytes},
                           {"sram_peak_wafer", sram.peak_wafer},
                           {"sram_peak_x", sram.peak_x},
                           {"sram_peak_y", sram.peak_y}};
    for (size_t r = 0; r < sram.region_peak_bytes.size(); ++r)
      document["regions"][r]["prefill_sram_peak_bytes"] = sram.region_peak_bytes[r];
  }
  return document;
}

std::string plan_table(const Experiment& experiment, const mapping::Plan& plan, double compile_seconds,
                       const PrefillFigures* prefill) {
  std::ostringstream out;
  const HardwareSpec& hw = plan.hw;
  out << fmt::format("{} on {}: {} wafer(s) of {} x {} tiles, {} strip(s) of {} tiles per wafer\n",
                     section_label(experiment.config, "model", plan.model.name),
                     section_label(experiment.config, "hardware", hw.name), hw.wafers, hw.grid_width, hw.grid_height,
                     plan.strips, hw.grid_width / plan.strips);
  Table summary({{"figure", "", false}, {"value", "", true}, {"unit", "", false}});
  summary.add_row({"tiles used", fmt::format("{} of {}", plan.tiles_used, plan.tiles_total), "tiles"});
  summary.add_row(
      {"dataflow", mapping::dataflow_name(plan.options.dataflow), "of dense and MoE layers (mapping.dataflow)"});
  if (plan.options.dataflow == mapping::Dataflow::Distributed)
    summary.add_row({"attention", mapping::attention_layout_name(plan.options.attention),
                     plan.options.attention == mapping::AttentionLayout::Grid
                         ? "WaferLLM's kernel: head dimensions along a group's columns, positions along the rows "
                           "(mapping.attention)"
                         : "per KV-head group of columns, whole positions per tile (mapping.attention)"});
  summary.add_row({"line root", mapping::line_root_name(plan.options.line_root),
                   plan.options.line_root == mapping::LineRoot::First
                       ? "the first tile of each line (mapping.line_root)"
                       : "the middle tile of each line: reductions from both ends, multicasts both ways "
                         "(mapping.line_root; MoE layers keep the first; with middle_in_decode, decode only)"});
  if (plan.options.dataflow == mapping::Dataflow::Distributed &&
      plan.options.attention == mapping::AttentionLayout::Groups)
    summary.add_row({"KV head copies", std::to_string(plan.options.kv_head_copies),
                     "of each KV head's cache side by side, each attending with a share of its query heads "
                     "(mapping.kv_head_copies; at most what a region's columns take)"});
  summary.add_row({"hand-off", plan.options.slices_handoff() ? "slices" : "root",
                   plan.options.slices_handoff() ? "root-column tiles to the next region's, straight (mapping.handoff)"
                                                 : "region root to the next region's root (mapping.handoff)"});
  summary.add_row({"multicast axis", plan.options.multicast_along_x ? "x" : "y",
                   "root row along it, root column across (mapping.multicast_axis)"});
  summary.add_row({"prefill GEMMs", mapping::prefill_gemm_name(plan.options.prefill_gemm),
                   "projections of a prefill (mapping.prefill_gemm)"});
  if (plan.options.dataflow == mapping::Dataflow::Distributed)
    summary.add_row({"prefill attention", mapping::attention_layout_name(plan.options.prefill_attention),
                     plan.options.prefill_attention == plan.options.attention
                         ? "as decode's (mapping.prefill_attention)"
                         : "slices re-cut around it, KV entries moved to decode's groups (mapping.prefill_attention)"});
  if (plan.model.moe.n_experts > 0)
    summary.add_row({"MoE combine", mapping::moe_combine_name(plan.options.moe_combine),
                     moe_combine_text(plan.options.moe_combine)});
  for (const mapping::Region& region : plan.regions) {
    if (region.blocks.size() < 2) continue;
    const ExpertBlocks experts = expert_blocks(region);
    const std::string columns = experts.columns_min == experts.columns_max
                                    ? std::to_string(experts.columns_min)
                                    : fmt::format("{}-{}", experts.columns_min, experts.columns_max);
    summary.add_row({"expert blocks", fmt::format("{} of {} x {}", region.blocks.size() - 1, experts.rows, columns),
                     fmt::format("tiles (rows x columns) per expert, {} row(s) of blocks below {} attention rows ({})",
                                 experts.rows_of_blocks, experts.attention_rows, region.name)});
    break;  // the first MoE layer's; every region's are in --json
  }
  if (plan.options.reduction == mapping::Reduction::KTree)
    summary.add_row({"reductions", fmt::format("K-tree, K = {}", plan.options.ktree_levels),
                     "levels of chains, streamed (mapping.reduction, mapping.ktree_levels)"});
  else
    summary.add_row({"reductions", fmt::format("fan-in {}", plan.options.reduce_fanin),
                     "trees, store and forward per level (mapping.reduction, mapping.reduce_fanin)"});
  summary.add_row({"partial sums", to_string(plan.options.partial_sum),
                   "format of GEMV partial sums in the trees (mapping.partial_sum_dtype)"});
  summary.add_row(
      {"activations", plan.options.dataflow == mapping::Dataflow::Root ? "root" : "slices", slices_text(plan.options)});
  summary.add_row({"SRAM per tile, peak", std::to_string(plan.sram_peak_bytes),
                   fmt::format("bytes of {} (wafer {}, x {}, y {})", hw.tile.sram_bytes, plan.sram_peak_wafer,
                               plan.sram_peak_x, plan.sram_peak_y)});
  summary.add_row({"SRAM per tile, mean", std::to_string(plan.sram_mean_bytes), "bytes"});
  summary.add_row({"max context", context_text(plan.max_context_tokens),
                   fmt::format("tokens (workload asks {})", plan.workload.max_context())});
  if (prefill) {
    std::string chunk_text;
    switch (plan.options.prefill_chunk) {
      case mapping::PrefillChunk::LargestFitting:
        chunk_text = fmt::format(
            "tokens, the largest of at most {} (workload.prefill_chunk_tokens) whose buffers fit every tile "
            "(mapping.prefill_chunk)",
            plan.workload.prefill_chunk_tokens);
        break;
      case mapping::PrefillChunk::FastestFitting:
        chunk_text = fmt::format(
            "tokens, of the chunks whose buffers fit every tile (1 to {}), the one the closed form times fastest "
            "(mapping.prefill_chunk)",
            prefill->fitting_chunk_tokens);
        break;
      case mapping::PrefillChunk::AsAsked:
        chunk_text = prefill->fitting_chunk_tokens == prefill->chunk_tokens
                         ? std::string("tokens (workload.prefill_chunk_tokens); its buffers fit every tile")
                         : fmt::format(
                               "tokens (workload.prefill_chunk_tokens), as asked; the tiles hold the buffers of {} "
                               "(mapping.prefill_chunk: largest_fitting takes that, fastest_fitting the fastest "
                               "of those)",
                               prefill->fitting_chunk_tokens);
        break;
    }
    summary.add_row({"prefill chunk", std::to_string(prefill->chunk_tokens), chunk_text});
    const mapping::PrefillSram& sram = prefill->sram;
    summary.add_row({"prefill SRAM, peak", std::to_string(sram.peak_bytes),
                     fmt::format("bytes of {} at that chunk (wafer {}, x {}, y {})", hw.tile.sram_bytes,
                                 sram.peak_wafer, sram.peak_x, sram.peak_y)});
  }
  summary.add_row({"colours, peak", std::to_string(plan.colors_peak),
                   fmt::format("of {} routable", hw.fabric.colors - hw.fabric.colors_reserved)});
  summary.add_row({"relays", std::to_string(plan.relays), "routing patterns"});
  summary.add_row({"plan memory", megabytes(plan.plan_bytes),
                   fmt::format("MB ({:.1f} bytes per tile, {} programs)", double(plan.plan_bytes) / plan.tiles_total,
                               plan.programs.programs.size())});
  if (hw.repairs) {
    const RepairSummary repaired = hw.repairs->summary(hw.wafers);
    summary.add_row({"repaired wafer",
                     fmt::format("{} dead tiles, {} dead links", repaired.dead_tiles, repaired.dead_links),
                     repair_text(hw)});
  }
  summary.add_row({"compile time", fmt::format("{:.3f}", compile_seconds), "s"});
  out << summary.str() << "\n";

  Table regions({{"region", "", false},
                 {"wafer", "", true},
                 {"x", "", true},
                 {"y", "", true},
                 {"size", "tiles", true},
                 {"tiles", "", true},
                 {"weights", "MB", true},
                 {"KV", "MB", true},
                 {"SRAM peak", "B", true},
                 {"SRAM mean", "B", true},
                 {"max context", "tokens", true},
                 {"hand-off in/out", "", false}});
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const mapping::Region& region = plan.regions[r];
    const mapping::RegionStats& stats = plan.stats[r];
    regions.add_row(
        {region.name, std::to_string(region.box.wafer), std::to_string(region.box.x0), std::to_string(region.box.y0),
         fmt::format("{} x {}", region.box.width_x(), region.box.height_y()), std::to_string(stats.tiles),
         megabytes(stats.weight_bytes), megabytes(stats.kv_bytes), std::to_string(stats.sram_peak_bytes),
         std::to_string(stats.sram_mean_bytes), context_text(stats.max_context_tokens),
         fmt::format("{}/{}", region.slices_in ? "slices" : "root", region.slices_out ? "slices" : "root")});
  }
  out << regions.str();
  return out.str();
}

}  // namespace

Report map_report(const Experiment& experiment, const mapping::Plan& plan, double compile_seconds) {
  // The prefill's chunk and buffers, when the workload has a prefill: what the prefill plan would take.
  std::optional<PrefillFigures> prefill;
  if (plan.workload.prefill) {
    const uint64_t chunk = mapping::prefill_chunk_tokens(plan);
    prefill = PrefillFigures{chunk, mapping::largest_fitting_chunk(plan), mapping::prefill_sram(plan, chunk)};
  }
  const PrefillFigures* figures = prefill ? &*prefill : nullptr;
  Report report{plan_json(experiment, plan, compile_seconds, figures),
                plan_table(experiment, plan, compile_seconds, figures)};
  if (experiment.speculative) {
    const SpeculativeMap speculative = speculative_map(experiment, plan);
    report.document["speculative"] = speculative.document;
    report.table += speculative.table;
  }
  return report;
}

}  // namespace wafersim::reports
