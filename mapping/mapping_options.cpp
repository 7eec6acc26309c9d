#include "mapping/mapping_options.h"

#include <string>

#include "models/config/param_table.h"

namespace wafersim::mapping {

const char* dataflow_name(Dataflow dataflow) { return dataflow == Dataflow::Distributed ? "distributed" : "root"; }

const char* reduction_name(Reduction reduction) { return reduction == Reduction::KTree ? "ktree" : "tree"; }
const char* line_root_name(LineRoot root) {
  return root == LineRoot::Middle ? "middle" : root == LineRoot::MiddleInDecode ? "middle_in_decode" : "first";
}

const char* prefill_gemm_name(PrefillGemm gemm) { return gemm == PrefillGemm::MeshGemm ? "meshgemm" : "chunked_gemv"; }

const char* prefill_chunk_name(PrefillChunk chunk) {
  switch (chunk) {
    case PrefillChunk::LargestFitting: return "largest_fitting";
    case PrefillChunk::FastestFitting: return "fastest_fitting";
    case PrefillChunk::AsAsked: break;
  }
  return "as_asked";
}

const char* moe_combine_name(MoeCombine combine) {
  switch (combine) {
    case MoeCombine::Root: return "root";
    case MoeCombine::Tree: return "tree";
    case MoeCombine::Columns: break;
  }
  return "columns";
}
const char* handoff_name(Handoff handoff) { return handoff == Handoff::Slices ? "slices" : "root"; }
const char* attention_layout_name(AttentionLayout layout) {
  return layout == AttentionLayout::Grid ? "grid" : "groups";
}

namespace {

// Named again by the cross-field checks.
constexpr const char* kLayerColumns = "mapping.layer_grid.columns";
constexpr const char* kLayerRows = "mapping.layer_grid.rows";
constexpr const char* kHandoff = "mapping.handoff";
constexpr const char* kAttention = "mapping.attention";
constexpr const char* kPrefillAttention = "mapping.prefill_attention";
constexpr const char* kMoeCombine = "mapping.moe_combine";

// A choice of two values or auto: `root_word` gives `root`, the other word
// `distributed`, and auto the one that goes with mapping.dataflow (read before).
template <class Enum>
config::ParamTable<MappingOptions>::Reader auto_by_dataflow(Enum MappingOptions::*member, const char* root_word,
                                                            Enum root, Enum distributed) {
  return [=](const config::Config& config, const std::string& path, MappingOptions& options) {
    const std::string& word = config.get_string(path);
    const bool is_root = word == "auto" ? options.dataflow == Dataflow::Root : word == root_word;
    options.*member = is_root ? root : distributed;
  };
}

using config::bool_param;
using config::enum_param;
using config::float_param;
using config::int_param;

const config::ParamTable<MappingOptions>& mapping_table() {
  static const config::ParamTable<MappingOptions> table =
      config::ParamTable<MappingOptions>()
          .add(float_param("mapping.region_aspect", "", "1.0", 0.01, 1000,
                           "Preferred columns/rows ratio of a layer region; picks how many vertical strips "
                           "each wafer is cut into when mapping.strips is 0"),
               &MappingOptions::region_aspect)
          .add(int_param("mapping.strips", "", "0", 0, 4096,
                         "Vertical strips per wafer that regions are stacked in (serpentine); 0 = from region_aspect"),
               &MappingOptions::strips)
          .add(int_param("mapping.reduce_fanin", "", "2", 2, 64,
                         "Children per node of the reduction and gather trees inside a region"),
               &MappingOptions::reduce_fanin)
          .add_converted(
              enum_param(
                  "mapping.multicast_axis", {"auto", "x", "y"}, "auto",
                  "Axis along which a region's root multicasts input vectors (partial sums reduce along the other); "
                  "auto = y when some regions hand slices on (mapping.handoff; the root column then lies along x, "
                  "across the strips' direction, so consecutive regions' slices meet column by column), else x; "
                  "x also where the plan fits the wafers, or fewer wafers, only along x"),
              [](const config::Config& config, const std::string& path, MappingOptions& options) {
                const std::string& axis = config.get_string(path);
                options.multicast_axis_auto = axis == "auto";
                options.multicast_along_x = axis != "y";
              })
          .add(bool_param(
                   "mapping.use_all_tiles", true,
                   "Spread regions over every tile of the wafers (true) or use the fewest tiles that fit (false)"),
               &MappingOptions::use_all_tiles)
          .add_enum<PrefillChunk>(
              "mapping.prefill_chunk",
              {{"as_asked", PrefillChunk::AsAsked},
               {"largest_fitting", PrefillChunk::LargestFitting},
               {"fastest_fitting", PrefillChunk::FastestFitting}},
              "as_asked",
              "The chunk a prefill carries: as_asked = workload.prefill_chunk_tokens, whether or not its buffers "
              "fit (`wafersim map` says, and names the largest that would); largest_fitting = the largest of at "
              "most that whose buffers fit every tile; fastest_fitting = of those, the one whose prefill the "
              "closed form times fastest (the shortest time to first token; a few dozen closed-form prefills at most "
              "compared, docs/MAPPING.md)",
              &MappingOptions::prefill_chunk)
          .add(int_param("mapping.stream_buffer_bytes", "bytes", "2048", 0, 1 << 20,
                         "SRAM a region root keeps for vectors that stream through it (gathers, broadcasts)"),
               &MappingOptions::stream_buffer_bytes)
          .add(float_param("mapping.moe_attention_share", "", "0", 0, 0.95,
                           "Share of an MoE layer region's rows given to attention and the router (the rest holds the "
                           "experts); 0 = in proportion to their bytes"),
               &MappingOptions::moe_attention_share)
          .add(int_param("mapping.moe_experts_per_row", "experts", "0", 0, 65536,
                         "Expert blocks side by side in each row of blocks of an MoE layer region (at most the "
                         "experts and the region's columns); 0 = the fastest that fits, by closed form (near-square "
                         "blocks with "
                         "mapping.dataflow: root)"),
               &MappingOptions::moe_experts_per_row)
          .add(int_param("mapping.vector_instruction_elements", "elements", "0", 0, 1 << 20,
                         "Elements of one multiply-add (DSD) instruction of a weight product: a GEMV's block "
                         "issues one instruction per input element and this many outputs, a MeshGEMM round one "
                         "per weight element and this many of the round's tokens, each costing "
                         "hardware.tile.vector_instruction_cycles beyond its multiply-adds; 0 = the whole run in "
                         "one instruction (one DSD covers thousands of elements); WaferLLM's decode kernels tile "
                         "their operands to 16"),
               &MappingOptions::vector_instruction_elements)
          .add(int_param(kLayerColumns, "tiles", "0", 0, 65536,
                         "Tiles along x of every layer region (with layer_grid.rows; the regions are then not grown "
                         "to fill the wafer); 0 = sized by the compiler"),
               &MappingOptions::layer_columns)
          .add(int_param(kLayerRows, "tiles", "0", 0, 65536,
                         "Tiles along y of every layer region (with layer_grid.columns); 0 = sized by the compiler"),
               &MappingOptions::layer_rows)
          .add_enum<Dataflow>(
              "mapping.dataflow", {{"root", Dataflow::Root}, {"distributed", Dataflow::Distributed}}, "distributed",
              "How layer regions move activations: root = through the region root (multicast from it "
              "before each GEMV, gather to it after, norms and residuals on it); distributed = the residual "
              "stream stays as slices on the root column, GEMVs alternate column-to-row and row-to-column, "
              "norms and residuals run on the slices and attention combines per KV-head group; an MoE layer "
              "gathers its normed vector to the root for the router and the experts and scatters their sum "
              "back (embedding and LM head always use root)",
              &MappingOptions::dataflow)
          .add_converted(
              enum_param("mapping.reduction", {"auto", "tree", "ktree"}, "auto",
                         "How a line of tiles combines partial sums and gathers slices: tree = a fan-in tree of "
                         "mapping.reduce_fanin children per node, store-and-forward (a node forwards once its whole "
                         "subtree has arrived); ktree = WaferLLM's K-tree of mapping.ktree_levels levels of chains, "
                         "streamed (a node adds and forwards each wavelet as it arrives); auto = ktree with the "
                         "distributed dataflow, tree with root"),
              auto_by_dataflow(&MappingOptions::reduction, "tree", Reduction::Tree, Reduction::KTree))
          .add_enum<LineRoot>(
              "mapping.line_root",
              {{"first", LineRoot::First},
               {"middle", LineRoot::Middle},
               {"middle_in_decode", LineRoot::MiddleInDecode}},
              "first",
              "Where the lines of tiles of a region have their roots: first = the line's first tile (a reduction "
              "runs the line's length to it and the multicast after it the length back); middle = the line's "
              "middle tile, as WaferLLM's allreduce: both halves reduce at once and multicasts leave both ways, "
              "about halving the hops of a reduction and its multicast (MoE layer regions keep first); "
              "middle_in_decode = middle in decode and first in the prefill, whose chunk-sized reductions a "
              "middle root's one input ramp slows",
              &MappingOptions::line_root)
          .add(int_param("mapping.ktree_levels", "", "2", 1, 8,
                         "Levels K of the K-tree (mapping.reduction: ktree): chains of about n^(1/K) tiles"),
               &MappingOptions::ktree_levels)
          .add_converted(
              enum_param(kHandoff, {"auto", "root", "slices"}, "auto",
                         "How the activation vector passes between consecutive regions: root = the previous region's "
                         "root sends the whole vector to the next one's root (which multicasts it down its root "
                         "column); slices = the previous region's root-column tiles send their slices straight to the "
                         "next region's root-column tiles, skipping the gather and the scatter (between distributed "
                         "layers, the embedding and the LM head); auto = slices with the "
                         "distributed dataflow, root with root"),
              auto_by_dataflow(&MappingOptions::handoff, "root", Handoff::Root, Handoff::Slices))
          .add_enum<AttentionLayout>(
              kAttention, {{"groups", AttentionLayout::Groups}, {"grid", AttentionLayout::Grid}}, "groups",
              "How distributed layers lay attention out: groups = each KV head owns a group of "
              "columns whose tiles hold whole positions, flash-decoding partials reduced down the columns "
              "and along the group; grid = WaferLLM's decode kernel: head dimensions along the group's "
              "columns, positions along the rows, scores summed along the rows, then the softmax's max "
              "and sum and the output reduced down the columns (needs mapping.dataflow: distributed)",
              &MappingOptions::attention)
          .add_converted(
              enum_param(
                  kPrefillAttention, {"decode", "groups", "grid"}, "decode",
                  "How a prefill lays attention out in distributed layers: decode = as mapping.attention; "
                  "grid = WaferLLM's kernel, whatever decode uses: with mapping.attention: groups the "
                  "chunk's q/k/v slices are re-cut into the grid's head dimensions along each KV head's "
                  "columns and its output cut back (rings along every row and down every column, charged), and every "
                  "row moves the keys and values it stores to the tiles where decode's groups read them "
                  "(charged); groups needs mapping.attention: groups"),
              [](const config::Config& config, const std::string& path, MappingOptions& options) {
                const std::string& word = config.get_string(path);
                options.prefill_attention = word == "decode" ? options.attention
                                            : word == "grid" ? AttentionLayout::Grid
                                                             : AttentionLayout::Groups;
              })
          .add(config::as_type(
                   config::ParamType::IntOrAuto,
                   int_param("mapping.kv_head_copies", "copies", "auto", 1, 1024,
                             "With attention: groups, copies of each KV head's cache side by side along the root "
                             "row, each attending with its own share of the head's query heads: a group's partial "
                             "sums shrink by the copies, its KV bytes do not (the key and value of each token "
                             "are multicast to every copy). Rounded down to a count that divides the query heads "
                             "per KV head and leaves every copy a column; auto = the most that do not raise the "
                             "lower bound on wafers (with a fixed mapping.layer_grid: that still fit its tiles)")),
               &MappingOptions::kv_head_copies)
          .add_enum<PrefillGemm>(
              "mapping.prefill_gemm", {{"chunked_gemv", PrefillGemm::ChunkedGemv}, {"meshgemm", PrefillGemm::MeshGemm}},
              "chunked_gemv",
              "How a prefill runs the projection GEMMs (QKV, O, gate/up, down) of distributed dense layers: "
              "chunked_gemv = the decode GEMV carrying the chunk (input multicast along a line, partial sums "
              "through reduction trees); meshgemm = WaferLLM's MeshGEMM, weight-stationary: the chunk's "
              "token blocks and the fp32 partial sums circulate between neighbours on interleaved rings "
              "along both axes (root-dataflow and MoE regions always use chunked_gemv)",
              &MappingOptions::prefill_gemm)
          .add_converted(
              enum_param(
                  kMoeCombine, {"auto", "root", "tree", "columns"}, "auto",
                  "How an MoE layer combines its experts' results: root = each routed and shared expert sends "
                  "its result to the layer root, which takes them in one after the other; tree = the results "
                  "stream as fp32 sums along each expert row and up the first column, every routed expert "
                  "adding its own as they pass, so the layer root takes in one vector; columns = the router runs "
                  "on the slices, the input reaches the experts as slices down the columns, each expert's "
                  "result stays as slices on its root row and the slices stream as fp32 sums up the columns "
                  "of the experts stacked above it, each column's sum going to the root-column tiles that "
                  "hold its elements (needs mapping.dataflow: distributed); auto = columns with the "
                  "distributed dataflow, root with root"),
              [](const config::Config& config, const std::string& path, MappingOptions& options) {
                const std::string& word = config.get_string(path);
                if (word == "auto")
                  options.moe_combine = options.dataflow == Dataflow::Root ? MoeCombine::Root : MoeCombine::Columns;
                else
                  options.moe_combine = word == "root"   ? MoeCombine::Root
                                        : word == "tree" ? MoeCombine::Tree
                                                         : MoeCombine::Columns;
              })
          .add_enum<Dtype>("mapping.partial_sum_dtype",
                           {{"fp32", Dtype::FP32}, {"fp16", Dtype::FP16}, {"bf16", Dtype::BF16}}, "fp32",
                           "Format in which a GEMV's partial sums are written, sent through the reduction tree and "
                           "added (every GEMV, both dataflows, prefill included); fp16 halves the reduction's bytes, "
                           "as WaferLLM's fp16 reductions do, at the cost of rounding at every add",
                           &MappingOptions::partial_sum);
  return table;
}

}  // namespace

void declare_mapping_params(config::Schema& schema) { mapping_table().declare(schema); }

MappingOptions mapping_options_from_config(const config::Config& config) {
  const MappingOptions options = mapping_table().read(config);
  if ((options.layer_columns == 0) != (options.layer_rows == 0))
    config.fail(options.layer_columns == 0 ? kLayerRows : kLayerColumns,
                "mapping.layer_grid needs both columns and rows (or neither)");
  // Only a written "slices" gives slices with the root dataflow ("auto" gives root).
  if (options.handoff == Handoff::Slices && options.dataflow == Dataflow::Root)
    config.fail(kHandoff,
                "slices needs mapping.dataflow: distributed (the root dataflow keeps the vector at the region root)");
  if (options.moe_combine == MoeCombine::Columns && options.dataflow == Dataflow::Root)
    config.fail(kMoeCombine,
                "columns needs mapping.dataflow: distributed (the root dataflow keeps the vector at the region root)");
  if (options.kv_head_copies > 1 && (options.attention == AttentionLayout::Grid || options.dataflow == Dataflow::Root))
    config.fail("mapping.kv_head_copies",
                "copies of the KV heads need mapping.attention: groups and mapping.dataflow: distributed");
  if (options.attention == AttentionLayout::Grid && options.dataflow == Dataflow::Root)
    config.fail(kAttention,
                "grid needs mapping.dataflow: distributed (the root dataflow attends from the region root)");
  if (options.prefill_attention == AttentionLayout::Grid && options.dataflow == Dataflow::Root)
    config.fail(kPrefillAttention,
                "grid needs mapping.dataflow: distributed (the root dataflow attends from the region root)");
  if (options.prefill_attention == AttentionLayout::Groups && options.attention == AttentionLayout::Grid)
    config.fail(kPrefillAttention,
                "groups needs mapping.attention: groups (a move of the KV cache from groups to the grid is not "
                "modelled)");
  return options;
}

}  // namespace wafersim::mapping
