#pragma once
// The mapping.* section: strategy knobs of the layer-partitioning compiler.
#include <cstdint>

#include "models/dtype.h"

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

namespace mapping {

// How a dense layer region moves its activations (mapping.dataflow).
//   Root: the region root holds the vector between GEMVs; every projection
//     starts with a multicast from the root and ends with a gather to it, and
//     norms and residual adds run on the root alone.
//   Distributed: the residual stream stays as slices on the root column;
//     GEMVs alternate between column-to-row and row-to-column, norms and
//     residual adds run on the slices, attention combines per KV-head group.
// Embedding, LM head and MoE regions always use Root.
enum class Dataflow { Root, Distributed };

// How a line of tiles combines partial sums and gathers slices (mapping.reduction).
//   Tree: a fan-in tree (reduce_fanin children per node), store-and-forward:
//     a node forwards its subtree's result once all of it has arrived.
//   KTree: WaferLLM's K-tree, ktree_levels levels of chains, streamed: a node
//     adds and forwards each wavelet as it arrives (docs/MAPPING.md).
enum class Reduction { Tree, KTree };

// How a prefill runs the projection GEMMs of a distributed dense layer
// (mapping.prefill_gemm; docs/MAPPING.md, "Prefill").
//   ChunkedGemv: the decode GEMV carrying the chunk (multicast in, reduction tree out).
//   MeshGemm: WaferLLM-style cyclic shifts between neighbours on the mesh (mapping/mesh_gemm.h).
enum class PrefillGemm { ChunkedGemv, MeshGemm };

// The chunk a prefill carries (mapping.prefill_chunk):
//   AsAsked: workload.prefill_chunk_tokens, whether or not its buffers fit.
//   LargestFitting: the largest of at most that whose buffers fit every tile.
//   FastestFitting: of those that fit, the one whose prefill the closed form
//     times fastest (mapping/prefill_plan.cpp, fastest_fitting_chunk).
enum class PrefillChunk { AsAsked, LargestFitting, FastestFitting };

// How an MoE layer region combines its experts' results (mapping.moe_combine).
//   Root: every routed and shared expert sends its whole result to the layer
//     root, whose one input ramp takes them in one after the other.
//   Tree: the results stream, as fp32 sums, along each expert row to its first
//     block and up the first column to the layer root; the experts of the
//     iteration's routing (and the shared ones) add theirs in as they pass,
//     and the layer root takes in one vector (docs/MAPPING.md, "MoE").
//   Columns: the router runs on the slices and the input reaches the experts
//     as slices down the columns; each expert's result stays as slices on its
//     block's root row; the slices stream, as fp32 sums, up the columns of the
//     experts stacked in the same place of every expert row, and the top of
//     each column's chain sends its sum to the root-column tiles that hold the
//     matching elements of the residual stream (mapping.dataflow: distributed only).
enum class MoeCombine { Root, Tree, Columns };

// How the activation vector passes from one region to the next (mapping.handoff).
//   Root: the previous region's root sends the whole vector to the next one's root.
//   Slices: the previous region's root-column tiles send their slices straight
//     to the next region's root-column tiles (re-cut where the two regions'
//     slices differ); the next region skips its scatter and the previous its
//     gather. Between distributed dense layers, and from the embedding and
//     into the LM head next to them; MoE regions keep Root on both sides.
enum class Handoff { Root, Slices };

// How a distributed dense layer lays attention out over its block (mapping.attention).
//   Groups: each KV head owns a group of columns whose tiles each hold whole
//     positions; q/k/v travel to every tile of the group and flash-decoding
//     partials reduce down the columns and along the group (docs/MAPPING.md).
//   Grid: WaferLLM's decode kernel: head dimensions along the group's
//     columns, positions along the rows; scores summed along the rows, then
//     the softmax's max and sum and the output reduced down the columns.
enum class AttentionLayout { Groups, Grid };

// Where a region's lines of tiles have their roots (mapping.line_root).
//   First: the line's first tile: a reduction runs the line's length to it
//     and the multicast after it runs the length back.
//   Middle: the line's middle tile: both halves reduce at once and multicasts
//     leave both ways, as WaferLLM's allreduce does (docs/MAPPING.md, "Middle
//     roots"). MoE regions keep First.
//   MiddleInDecode: Middle in the decode plan, First in the prefill's, whose
//     reductions are bound by bytes rather than by hops.
enum class LineRoot { First, Middle, MiddleInDecode };

struct MappingOptions {
  double region_aspect = 1.0;     // preferred columns / rows of a layer region (picks the strip count)
  uint32_t strips = 0;            // vertical strips per wafer; 0 = chosen from region_aspect
  uint32_t reduce_fanin = 2;      // children per node of reduction and gather trees
  bool multicast_along_x = true;  // input vectors travel along x (rows); false = along y
  // mapping.multicast_axis: auto: the compiler sets multicast_along_x (false
  // when some region hands slices on to the next, docs/MAPPING.md).
  bool multicast_axis_auto = false;
  bool use_all_tiles = true;  // spread regions over every tile; false = fewest tiles that fit
  PrefillChunk prefill_chunk = PrefillChunk::AsAsked;
  uint64_t stream_buffer_bytes = 2048;  // buffer of a region root for vectors streamed through it
  double moe_attention_share = 0;       // share of an MoE region's rows for attention and router; 0 = by bytes
  // Expert blocks side by side in a row of an MoE region; 0 = auto (with the
  // distributed dataflow the compiler times near-square blocks and wider and
  // narrower ones by closed form and keeps the fastest that fits; the root
  // dataflow keeps them near square).
  uint32_t moe_experts_per_row = 0;
  // Every layer region exactly this many tiles along x and y (a measured set-up
  // such as WaferLLM's P x P block); 0 x 0 = sized by the compiler.
  uint32_t layer_columns = 0, layer_rows = 0;

  bool fixed_layer_grid() const { return layer_columns > 0; }
  Dataflow dataflow = Dataflow::Distributed;  // of dense layer regions
  Reduction reduction = Reduction::KTree;     // of every region's trees
  uint32_t ktree_levels = 2;
  PrefillGemm prefill_gemm = PrefillGemm::ChunkedGemv;
  MoeCombine moe_combine = MoeCombine::Columns;
  // Format of a GEMV's partial sums as they are written, sent up the
  // reduction tree and added (fp32 by default; WaferLLM reduces in fp16).
  Dtype partial_sum = Dtype::FP32;
  // Elements of one multiply-add instruction of a weight product (each costs
  // TileParams::vector_instruction_cycles); 0 = a whole row of the tile's
  // block in one instruction. WaferLLM's kernels take 16.
  uint32_t vector_instruction_elements = 0;
  Handoff handoff = Handoff::Slices;                    // honoured with the distributed dataflow only
  AttentionLayout attention = AttentionLayout::Groups;  // of distributed dense layers
  // Of a prefill's distributed layers (mapping.prefill_attention): grid with
  // decode's groups re-cuts the slices around attention and moves the KV
  // entries to where decode reads them (docs/MAPPING.md, "Prefill").
  AttentionLayout prefill_attention = AttentionLayout::Groups;
  LineRoot line_root = LineRoot::First;  // of every region but MoE layers
  // Copies of each KV head's cache with attention: groups, each attending with
  // a share of the head's query heads (kv_groups.h); 0 = auto (the compiler
  // takes the most that do not raise the lower bound on wafers).
  uint32_t kv_head_copies = 0;

  bool slices_handoff() const { return handoff == Handoff::Slices && dataflow == Dataflow::Distributed; }
};

const char* dataflow_name(Dataflow dataflow);               // "root", "distributed"
const char* reduction_name(Reduction reduction);            // "tree", "ktree"
const char* prefill_gemm_name(PrefillGemm gemm);            // "chunked_gemv", "meshgemm"
const char* prefill_chunk_name(PrefillChunk chunk);         // "as_asked", "largest_fitting", "fastest_fitting"
const char* moe_combine_name(MoeCombine combine);           // "root", "tree", "columns"
const char* handoff_name(Handoff handoff);                  // "root", "slices"
const char* attention_layout_name(AttentionLayout layout);  // "groups", "grid"
const char* line_root_name(LineRoot root);                  // "first", "middle", "middle_in_decode"

void declare_mapping_params(config::Schema& schema);
MappingOptions mapping_options_from_config(const config::Config& config);

}  // namespace mapping
}  // namespace wafersim
