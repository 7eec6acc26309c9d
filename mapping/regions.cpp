// What each kind of region computes for one token, as blocks of steps.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "mapping/context_steps.h"
#include "mapping/grid_attention.h"
#include "mapping/kv_groups.h"
#include "mapping/mesh_gemm.h"
#include "mapping/moe_dispatch.h"
#include "mapping/region.h"
#include "mapping/slice_exchange.h"
#include "models/cost.h"
#include "models/route.h"
#include "models/task_builders.h"
#include "workloads/lowering.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

namespace {

using workloads::ElementwiseFlops;
using workloads::ModelSpec;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Inputs for closed forms that depend on neither the context nor the routing.
class FixedInputs : public IterationInputs {
 public:
  uint64_t context(uint64_t) const override { return 0; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }
};

// The tables the embedding region looks rows up in (none of its own when tied to the LM head).
uint64_t embedding_elements(const ModelSpec& m) {
  const uint64_t table = m.tied_embeddings ? 0 : uint64_t(m.vocab_size) * m.d_model;
  const uint64_t positions =
      m.positions == workloads::PositionKind::Learned ? uint64_t(m.max_positions) * m.d_model : 0;
  return table + positions;
}

uint64_t qkv_dim(const ModelSpec& m) { return uint64_t(m.n_heads + 2 * m.n_kv_heads) * m.head_dim; }
uint64_t mlp_width(const ModelSpec& m, uint64_t ffn) { return workloads::activation_inputs(m.mlp) * ffn; }

// The root's work for one token of an element-wise op, as the graph costs it.
Work work_of(const workloads::OpCost& cost) {
  return Work{cost.flops, cost.activation_bytes_in + cost.weight_bytes, cost.activation_bytes_out};
}
Work norm_work(const ModelSpec& m) { return work_of(workloads::norm_cost(m, 1)); }
Work residual_work(const ModelSpec& m) { return work_of(workloads::residual_cost(m, 1)); }
// fp32 values: norm statistics, router logits, scores.
uint64_t sum_bytes(uint64_t elements) { return dtype_bytes(Dtype::FP32, elements); }

}  // namespace

workloads::LayerLowering main_block_lowering(RegionKind kind, const MappingOptions& options) {
  const bool distributed = options.dataflow == Dataflow::Distributed;
  switch (kind) {
    case RegionKind::Embedding: return workloads::LayerLowering::Embedding;
    case RegionKind::Head: return workloads::LayerLowering::Head;
    case RegionKind::Moe:
      return distributed ? workloads::LayerLowering::DistributedMoeLayer : workloads::LayerLowering::MoeLayer;
    case RegionKind::Dense: break;
  }
  return distributed ? workloads::LayerLowering::DistributedLayer : workloads::LayerLowering::Layer;
}

namespace {

// Builds the chain of one block, handing out tags in order. Every step it
// adds is a row of the block's lowering table (workloads/lowering.h).
class ChainBuilder {
 public:
  ChainBuilder(const RegionContext& context, workloads::LayerLowering lowering, Block& block, uint16_t layer,
               uint16_t first_tag)
      : lowering_(lowering), parallel_residual_(context.model->parallel_residual), block_(block), next_tag_(first_tag) {
    env_.tile = context.hw->tile;
    env_.fabric = context.hw->fabric;
    env_.geo = block.geo;
    env_.fanin = context.options->reduce_fanin;
    env_.ktree_levels = context.options->reduction == Reduction::KTree ? context.options->ktree_levels : 0;
    env_.colors_available = context.colors_available;
    env_.layer = layer;
    env_.activation = context.model->activation_dtype;
    env_.partial_sum = context.options->partial_sum;
    env_.stream_buffer_bytes = context.options->stream_buffer_bytes;
    env_.vector_instruction_elements = context.options->vector_instruction_elements;
    env_.tokens = context.tokens;
    block.tokens = context.tokens;
  }
  template <typename Make>
  void add(const char* label, Make make) {
    const workloads::StepLowering* row = workloads::find_lowering(lowering_, label);
    if (!row)
      throw std::logic_error(std::string("step ") + label + " has no row in the " + workloads::to_string(lowering_) +
                             " lowering table (workloads/lowering.cpp)");
    if (row->residual == (parallel_residual_ ? workloads::ResidualForm::Sequential : workloads::ResidualForm::Parallel))
      throw std::logic_error(std::string("step ") + label + "'s row is for layers " +
                             (parallel_residual_ ? "without" : "with") +
                             " a parallel residual (workloads/lowering.cpp)");
    env_.label = label;
    env_.tag = next_tag_;
    block_.steps.push_back(make(env_));
    next_tag_ = uint16_t(next_tag_ + block_.steps.back()->tags_used());
  }
  uint16_t next_tag() const { return next_tag_; }
  // The steps after this take tags from `tag` on: the ones before it are another block's.
  void skip_tags_to(uint16_t tag) { next_tag_ = std::max(next_tag_, tag); }
  const BlockGeometry& geo() const { return block_.geo; }
  // The bytes of a GEMV's summed output, as the step after it reads them.
  uint64_t gemv_sum_bytes(uint64_t elements) const { return dtype_bytes(env_.partial_sum, elements); }

 private:
  workloads::LayerLowering lowering_;
  bool parallel_residual_;
  Block& block_;
  StepEnv env_;
  uint16_t next_tag_;
};

// From the root of block `from` to the root of block `to`.
SendTask root_to_root(const BlockGeometry& from, const BlockGeometry& to) {
  return SendTask()
      .dx(int32_t(to.root_x()) - int32_t(from.root_x()))
      .dy(int32_t(to.root_y()) - int32_t(from.root_y()))
      .dwafer(int32_t(to.wafer) - int32_t(from.wafer));
}

// Whether some tile's QKV slice holds part of a head only: the slices of the
// root column (or, along_row, of each attention group's columns on the root row)
// hold whole heads only when each line's heads split evenly over its tiles.
bool heads_cut(const ModelSpec& m, const BlockGeometry& g, bool along_row, uint32_t kv_copies) {
  if (!along_row) return !g.even_split() || (uint64_t(m.n_heads) + 2ull * m.n_kv_heads) % g.rows != 0;
  if (!g.even_split()) return true;
  // The attention groups of the distributed attention (mapping/steps.cpp, row_attention_step).
  const KvGroups groups(m.n_kv_heads, m.n_heads, g.cols, kv_copies);
  for (uint32_t group = 0; group < groups.count; ++group) {
    // Query, key and value heads of the group's slices: a KV head's key and value lie in its first copy's.
    const auto [first, last] = groups.kv_head_range(group);
    const auto [q_first, q_last] = groups.query_range(group);
    const uint64_t heads = q_last - q_first + (groups.first_copy(group) == group ? 2ull * (last - first) : 0);
    if (heads % groups.columns(group) != 0) return true;
  }
  return false;
}

// Each tile holding a slice of the QKV sums (the root column's, or the root
// row's along_row) turns it into activations. The QKV rows are ordered so
// that every slice holds an even share of the query and key elements (each
// rotary pair in one tile), which get the q/k norm and rotary; values get
// neither. Returns the slice's elements.
uint64_t add_qkv_slices(ChainBuilder& chain, const ModelSpec& m, bool along_row, uint32_t kv_copies = 1) {
  const BlockGeometry& g = chain.geo();
  auto largest = [&](uint64_t n) { return along_row ? g.largest_column_share(n) : g.largest_row_share(n); };
  const uint64_t slice = largest(qkv_dim(m));
  const uint64_t qk_slice = largest(uint64_t(m.n_heads + m.n_kv_heads) * m.head_dim);
  const bool rotary = m.positions == workloads::PositionKind::Rotary;
  uint64_t qk_flops = workloads::qk_norm_flops_per_element(m);
  // Rotary turns rotated_dims of each head: every slice is charged the largest share of those elements.
  const uint64_t rotary_flops = largest(workloads::rotated_elements(m)) * ElementwiseFlops::kRotary;
  uint64_t head_sums_read = 0;
  if (m.qk_norm && heads_cut(m, g, along_row, kv_copies)) {
    // A head spread over several tiles is normalised by its sum of squares over
    // all of them: each tile sums the squares of its q/k elements per head, the
    // per-head sums (fp32, every q and k head) reduce along the line to the
    // root and return along it, and each tile scales its elements.
    const uint64_t sums_bytes = sum_bytes(uint64_t(m.n_heads) + m.n_kv_heads);
    const uint64_t stats_flops = workloads::norm_statistics_flops_per_element(workloads::NormKind::RMSNorm);
    chain.add("qk_norm_stats", [&](const StepEnv& env) {
      return column_compute_step(env, Work{qk_slice * stats_flops, chain.gemv_sum_bytes(qk_slice), sums_bytes},
                                 m.activation_dtype, along_row);
    });
    chain.add("qk_norm_reduce", [&](const StepEnv& env) {
      return along_row ? gather_row_step(env, sums_bytes, /*reduce=*/true)
                       : gather_column_step(env, sums_bytes, /*reduce=*/true);
    });
    chain.add("qk_norm_broadcast", [&](const StepEnv& env) {
      return along_row ? row_broadcast_step(env, sums_bytes) : column_broadcast_step(env, sums_bytes, sums_bytes);
    });
    qk_flops -= stats_flops;
    head_sums_read = sums_bytes;
  }
  const Work work{qk_slice * qk_flops + rotary_flops, chain.gemv_sum_bytes(slice) + head_sums_read,
                  dtype_bytes(m.activation_dtype, slice)};
  chain.add(rotary      ? "rotary"
            : m.qk_norm ? "qk_norm"
                        : "qkv_slices",
            [&](const StepEnv& env) { return column_compute_step(env, work, m.activation_dtype, along_row); });
  return slice;
}

// Attention of `layer`; sink logits, where the model has them, join the
// softmax once the partials are combined.
AttentionShape attention_shape(const ModelSpec& m, uint32_t layer, uint64_t max_context = 0) {
  const bool windowed = m.sliding_window > 0 && m.attended_positions(layer, ~0ull >> 1) == m.sliding_window;
  AttentionShape shape{m.n_heads,  m.cached_kv_heads(),
                       m.head_dim, windowed ? m.sliding_window : 0,
                       m.kv_dtype, workloads::attention_flops_per_score(m),
                       {}};
  shape.key_dim = m.attention_key_dim();
  shape.value_dim = m.attention_value_dim();
  shape.entry_dim = m.cached_entry_dim();
  if (max_context > 0) shape.max_positions = m.attended_positions(layer, max_context);
  if (m.attention_sinks)
    shape.sinks = Work{uint64_t(m.n_heads) * ElementwiseFlops::kSoftmax, dtype_bytes(m.weight_dtype, m.n_heads), 0};
  return shape;
}

// Attention half of a transformer layer: norm, QKV, attention, output projection, residual + norm.
void add_attention(ChainBuilder& chain, const ModelSpec& m, uint32_t layer, uint64_t max_context) {
  const Dtype w = m.weight_dtype, act = m.activation_dtype;
  const uint64_t vector_params = workloads::layer_vector_params(m, layer);
  chain.add("input_norm", [&](const StepEnv& env) {
    return root_compute_step(env, norm_work(m), act, Category::Compute, vector_params, w);
  });
  chain.add("qkv_proj", [&](const StepEnv& env) {
    return gemv_to_column_step(env, GemvShape::matrix(m.d_model, qkv_dim(m), w).with_bias(m.qkv_bias, w));
  });
  const uint64_t slice = add_qkv_slices(chain, m, /*along_row=*/false);
  chain.add("gather_qkv", [&](const StepEnv& env) { return gather_column_step(env, dtype_bytes(act, slice)); });
  // The sink logits join the softmax once the partials are combined at the root.
  chain.add("attention",
            [&](const StepEnv& env) { return attention_step(env, attention_shape(m, layer, max_context)); });
  chain.add("o_proj", [&](const StepEnv& env) {
    return gemv_to_column_step(
        env, GemvShape::matrix(uint64_t(m.n_heads) * m.head_dim, m.d_model, w).with_bias(m.o_bias, m.weight_dtype));
  });
  const uint64_t o_slice = chain.geo().largest_row_share(m.d_model);
  chain.add("gather_o", [&](const StepEnv& env) { return gather_column_step(env, dtype_bytes(act, o_slice)); });
  if (m.parallel_residual) {  // the MLP takes the input norm the root kept
    chain.add("attn_residual",
              [&](const StepEnv& env) { return root_compute_step(env, residual_work(m), act, Category::Compute); });
    return;
  }
  chain.add("residual_norm", [&](const StepEnv& env) {
    return root_compute_step(env, residual_work(m) + norm_work(m), act, Category::Compute);
  });
}

// A feed-forward network over a block: up (and gate), activation, down; its
// output as slices on the root row. Its input at the root (or multicast along
// the root row under `input_tag`), or with `input_on_row` already as slices on the root row.
void add_ffn(ChainBuilder& chain, const ModelSpec& m, uint64_t ffn, Dtype w, bool bias, int32_t input_tag,
             bool input_on_row = false) {
  const Dtype act = m.activation_dtype;
  chain.add("gate_up_proj", [&](const StepEnv& env) {
    const GemvShape shape = GemvShape::matrix(m.d_model, mlp_width(m, ffn), w).with_bias(bias, m.weight_dtype);
    return input_on_row ? gemv_row_to_column_step(env, shape) : gemv_to_column_step(env, shape, input_tag);
  });
  const uint64_t slice = chain.geo().largest_row_share(ffn);
  chain.add("activation", [&](const StepEnv& env) {
    return column_compute_step(
        env,
        Work{slice * workloads::activation_flops_per_element(m.mlp),
             workloads::activation_inputs(m.mlp) * chain.gemv_sum_bytes(slice), dtype_bytes(act, slice)},
        act);
  });
  chain.add("down_proj", [&](const StepEnv& env) {
    return gemv_to_row_step(env, GemvShape::matrix(ffn, m.d_model, w).with_bias(bias, m.weight_dtype));
  });
}

// The down projection's slices gathered along the root row to the root.
void add_gather_down(ChainBuilder& chain, const ModelSpec& m) {
  const uint64_t out_slice = chain.geo().largest_column_share(m.d_model);
  chain.add("gather_down",
            [&](const StepEnv& env) { return gather_row_step(env, dtype_bytes(m.activation_dtype, out_slice)); });
}

// --- the distributed dataflow of a dense layer (mapping.dataflow: distributed) ---
//
// The residual stream stays as slices on the root column (slice i on tile
// (i, 0)); the GEMVs alternate column-to-row and row-to-column so no vector
// passes through the root between them. With the root hand-off the region
// takes its input at the root (scatter) and hands its output on from the root
// (gather); with slices (mapping.handoff) the root column's tiles take and
// hand on their slices themselves.

// A norm over the column slices: each slice's statistics (after adding the
// branch to the stream, with `residual`), an fp32 reduce of them down the
// column to the root, their multicast back down the column, and the scaling of
// each slice. The scaling step stores `vector_params` as slices on the column.
void add_slice_norm(ChainBuilder& chain, const ModelSpec& m, bool residual, const char* stats_label,
                    const char* reduce_label, const char* broadcast_label, const char* scale_label,
                    uint64_t vector_params) {
  const Dtype w = m.weight_dtype, act = m.activation_dtype;
  const uint64_t slice = chain.geo().largest_row_share(m.d_model);
  const uint64_t statistics_bytes = sum_bytes(workloads::norm_statistics(m.norm));
  // The residual add reads the stream and the branch and writes the stream (op_costs' residual_cost per element).
  const uint64_t stats_flops =
      workloads::norm_statistics_flops_per_element(m.norm) + (residual ? ElementwiseFlops::kAdd : 0);
  const Work stats{slice * stats_flops, dtype_bytes(act, (residual ? 2 : 1) * slice),
                   statistics_bytes + (residual ? dtype_bytes(act, slice) : 0)};
  // The stream's slice, whose statistics these are, stays on the column.
  chain.add(stats_label,
            [&](const StepEnv& env) { return stream_compute_step(env, stats, act, dtype_bytes(act, slice)); });
  chain.add(reduce_label,
            [&](const StepEnv& env) { return gather_column_step(env, statistics_bytes, /*reduce=*/true); });
  chain.add(broadcast_label,
            [&](const StepEnv& env) { return column_broadcast_step(env, statistics_bytes, statistics_bytes); });
  const Work scale{slice * workloads::norm_scaling_flops_per_element(m.norm),
                   dtype_bytes(act, slice) + dtype_bytes(w, workloads::norm_vectors(m.norm) * slice),
                   dtype_bytes(act, slice)};
  chain.add(scale_label, [&](const StepEnv& env) {
    return column_compute_step(env, scale, act, /*along_row=*/false, vector_params, w);
  });
}

// The distributed dataflow's GEMV pair: from the root column's slices to the
// root row's, and back; MeshGEMM steps instead in a prefill with
// mapping.prefill_gemm: meshgemm.
struct LineGemvs {
  bool mesh;
  std::unique_ptr<Step> column_to_row(const StepEnv& env, const GemvShape& shape) const {
    return mesh ? mesh_gemm_step(env, shape, /*from_column=*/true) : gemv_to_row_step(env, shape);
  }
  std::unique_ptr<Step> row_to_column(const StepEnv& env, const GemvShape& shape) const {
    return mesh ? mesh_gemm_step(env, shape, /*from_column=*/false) : gemv_row_to_column_step(env, shape);
  }
};

// The slices and layouts of a layer region on the distributed dataflow.
struct SliceLayer {
  LineGemvs gemvs;
  bool grid;         // this plan's attention laid out as WaferLLM's kernel (mapping.attention, prefill_attention)
  bool decode_grid;  // decode's, which the weights' order and the KV cache follow
  bool slices_in, slices_out;
  uint32_t kv_head_copies;    // wanted (mapping.kv_head_copies, resolved by the compiler)
  bool last_position_out;     // RegionContext::last_position_out
  uint64_t prompt_positions;  // RegionContext::prompt_positions
};

SliceLayer slice_layer(const RegionContext& context) {
  const MappingOptions& options = *context.options;
  return {{context.prefill && options.prefill_gemm == PrefillGemm::MeshGemm},
          (context.prefill ? options.prefill_attention : options.attention) == AttentionLayout::Grid,
          options.attention == AttentionLayout::Grid,
          context.slices_in,
          context.slices_out,
          std::max<uint32_t>(1, options.kv_head_copies),
          context.last_position_out,
          context.prompt_positions};
}

// Multi-head latent attention (model.mla), absorbed, from the input norm's
// slices on the root column to the attention output's on the root row's
// groups, then through W_UV and W_O back to the root column (docs/MAPPING.md,
// "Multi-head latent attention"). Attention is one latent KV head of key
// width kv_lora_rank + qk_rope_head_dim and value width kv_lora_rank, whose
// copies (mapping.kv_head_copies) share out the query heads.
void add_latent_attention(ChainBuilder& chain, const ModelSpec& m, uint32_t layer, uint64_t max_context,
                          const SliceLayer& how) {
  const Dtype w = m.weight_dtype, act = m.activation_dtype;
  const workloads::MlaSpec& mla = m.mla;
  const uint64_t heads = m.n_heads, entry = m.cached_entry_dim();
  const uint64_t latents = uint64_t(mla.q_lora_rank) + mla.kv_lora_rank;
  // Both latents and the rope key as slices on the root row; W_D's rows are
  // ordered so that every root-row tile holds an even share of each.
  chain.add("latent_proj", [&](const StepEnv& env) {
    return how.gemvs.column_to_row(env, GemvShape::matrix(m.d_model, latents + mla.qk_rope_head_dim, w));
  });
  const BlockGeometry& g = chain.geo();
  const uint64_t latent_slice = g.largest_column_share(mla.q_lora_rank) + g.largest_column_share(mla.kv_lora_rank);
  const uint64_t rope_slice = g.largest_column_share(mla.qk_rope_head_dim);
  // The two RMSNorms over the row: each tile's sums of squares of its share of
  // either latent, the two fp32 sums all-reduced along the row, the scaling;
  // the norm vectors are stored with the scaling, as slices on the row.
  const uint64_t sums_bytes = sum_bytes(2);
  const uint64_t stats_flops = workloads::norm_statistics_flops_per_element(workloads::NormKind::RMSNorm);
  chain.add("latent_norm_stats", [&](const StepEnv& env) {
    return column_compute_step(env, Work{latent_slice * stats_flops, chain.gemv_sum_bytes(latent_slice), sums_bytes},
                               act, /*along_row=*/true);
  });
  chain.add("latent_norm_reduce",
            [&](const StepEnv& env) { return gather_row_step(env, sums_bytes, /*reduce=*/true); });
  chain.add("latent_norm_broadcast", [&](const StepEnv& env) { return row_broadcast_step(env, sums_bytes); });
  const Work scale{latent_slice * workloads::norm_scaling_flops_per_element(workloads::NormKind::RMSNorm),
                   chain.gemv_sum_bytes(latent_slice) + dtype_bytes(w, latent_slice) + sums_bytes,
                   dtype_bytes(act, latent_slice)};
  chain.add("latent_norm_scale",
            [&](const StepEnv& env) { return column_compute_step(env, scale, act, /*along_row=*/true, latents, w); });
  chain.add("rotary_key", [&](const StepEnv& env) {
    return column_compute_step(
        env,
        Work{rope_slice * ElementwiseFlops::kRotary, chain.gemv_sum_bytes(rope_slice), dtype_bytes(act, rope_slice)},
        act, /*along_row=*/true);
  });
  // Every head's non-rotary and rope query on the root column; rotary turns the rope parts.
  const uint64_t q_width = heads * (uint64_t(m.head_dim) + mla.qk_rope_head_dim);
  chain.add("q_up_proj", [&](const StepEnv& env) {
    return how.gemvs.row_to_column(env, GemvShape::matrix(mla.q_lora_rank, q_width, w));
  });
  const uint64_t q_slice = g.largest_row_share(q_width),
                 q_rope_slice = g.largest_row_share(heads * mla.qk_rope_head_dim);
  chain.add("rotary_query", [&](const StepEnv& env) {
    return column_compute_step(
        env, Work{q_rope_slice * ElementwiseFlops::kRotary, chain.gemv_sum_bytes(q_slice), dtype_bytes(act, q_slice)},
        act);
  });
  // W_UK absorbed: each head's non-rotary query through its own 128 x 512
  // block into the latent space, the heads' blocks spread over the block's
  // tiles; each head's rope part passes through as an identity block without
  // weights, so its move to the root row rides in the GEMV's messages.
  chain.add("q_absorb", [&](const StepEnv& env) {
    return how.gemvs.column_to_row(
        env, GemvShape::matrix(q_width, heads * entry, w).with_stored(heads * m.head_dim * mla.kv_lora_rank));
  });
  const uint32_t copies = kv_head_copies(1, m.n_heads, g.cols, how.kv_head_copies);
  // Each root-row tile's slice of the absorbed queries and of the cache entry.
  const uint64_t slice = g.largest_column_share(heads * entry + entry);
  chain.add("attention", [&](const StepEnv& env) {
    AttentionShape shape = attention_shape(m, layer, max_context);
    shape.kv_copies = copies;
    return row_attention_step(env, shape, dtype_bytes(act, slice));
  });
  // W_UV then W_O, from the heads' latent outputs on the root row to the
  // residual stream's slices on the root column: the two factors as one
  // GEMV holding both (the move of the heads' values between them is not
  // charged: docs/MAPPING.md).
  const uint64_t v_width = heads * mla.v_head_dim;
  chain.add("o_proj", [&](const StepEnv& env) {
    return how.gemvs.row_to_column(env, GemvShape::matrix(heads * mla.kv_lora_rank, m.d_model, w)
                                            .with_stored(uint64_t(mla.kv_lora_rank) * v_width + v_width * m.d_model)
                                            .with_bias(m.o_bias, w));
  });
}

// Attention half of a layer on slices, up to the MLP norm's scaled slices on the root column.
void add_distributed_attention(ChainBuilder& chain, const ModelSpec& m, uint32_t layer, uint64_t max_context,
                               const SliceLayer& how) {
  const Dtype w = m.weight_dtype, act = m.activation_dtype;
  const uint64_t d_slice = chain.geo().largest_row_share(m.d_model);
  if (!how.slices_in)
    chain.add("scatter", [&](const StepEnv& env) {
      return column_broadcast_step(env, dtype_bytes(act, m.d_model), dtype_bytes(act, d_slice));
    });
  // Every norm vector of the layer (and the sinks) is stored with the input norm's scaling, as the root dataflow
  // stores them with its input norm. With latent attention the latents' norm vectors are stored with their own scaling.
  const uint64_t latent_norms = m.is_mla() ? uint64_t(m.mla.q_lora_rank) + m.mla.kv_lora_rank : 0;
  add_slice_norm(chain, m, false, "input_norm_stats", "input_norm_reduce", "input_norm_broadcast", "input_norm_scale",
                 workloads::layer_vector_params(m, layer) - latent_norms);
  if (m.is_mla()) {
    add_latent_attention(chain, m, layer, max_context, how);
    add_slice_norm(chain, m, true, "residual_norm_stats", "mlp_norm_reduce", "mlp_norm_broadcast", "mlp_norm_scale", 0);
    return;
  }
  // QKV as slices on the root row. W_QKV's rows are ordered so that the slice
  // of root-row column j belongs to the attention group that owns column j
  // (its queries, and its KV head's key and value in the head's first copy),
  // each rotary pair in one tile.
  chain.add("qkv_proj", [&](const StepEnv& env) {
    return how.gemvs.column_to_row(env, GemvShape::matrix(m.d_model, qkv_dim(m), w).with_bias(m.qkv_bias, w));
  });
  // The weights keep decode's order. A prefill laid out as the grid under
  // decode's groups re-cuts the slices around attention and moves the KV
  // entries it stores to decode's groups (slice_exchange.h, grid_attention.h).
  const uint32_t decode_copies =
      how.decode_grid ? 1 : kv_head_copies(m.n_kv_heads, m.n_heads, chain.geo().cols, how.kv_head_copies);
  const bool regrid = how.grid && !how.decode_grid;
  const uint64_t slice = add_qkv_slices(chain, m, /*along_row=*/true, decode_copies);
  if (regrid)
    chain.add("qkv_to_grid", [&](const StepEnv& env) {
      return slice_exchange_step(env, /*to_grid=*/true, m.n_kv_heads, m.n_heads, decode_copies,
                                 dtype_bytes(act, slice));
    });
  chain.add("attention", [&](const StepEnv& env) {
    AttentionShape shape = attention_shape(m, layer, max_context);
    if (!how.grid) {
      shape.kv_copies = decode_copies;
      return row_attention_step(env, shape, dtype_bytes(act, slice));
    }
    if (!regrid) return grid_attention_step(env, shape, dtype_bytes(act, slice));
    return grid_attention_step(env, shape, dtype_bytes(act, slice),
                               KvGroups(m.n_kv_heads, m.n_heads, env.geo.cols, decode_copies), how.prompt_positions);
  });
  if (regrid)
    chain.add("attention_to_groups", [&](const StepEnv& env) {
      const uint64_t out_slice = env.geo.largest_column_share(uint64_t(m.n_heads) * m.head_dim);
      return slice_exchange_step(env, /*to_grid=*/false, m.n_kv_heads, m.n_heads, decode_copies,
                                 dtype_bytes(act, out_slice));
    });
  chain.add("o_proj", [&](const StepEnv& env) {
    return how.gemvs.row_to_column(
        env, GemvShape::matrix(uint64_t(m.n_heads) * m.head_dim, m.d_model, w).with_bias(m.o_bias, w));
  });
  if (m.parallel_residual) {  // the MLP takes the input norm's slices the tiles kept
    chain.add("attn_residual_slices", [&](const StepEnv& env) {
      return stream_compute_step(
          env, Work{d_slice * ElementwiseFlops::kAdd, dtype_bytes(act, 2 * d_slice), dtype_bytes(act, d_slice)}, act,
          dtype_bytes(act, d_slice));
    });
    return;
  }
  add_slice_norm(chain, m, true, "residual_norm_stats", "mlp_norm_reduce", "mlp_norm_broadcast", "mlp_norm_scale", 0);
}

// The MLP branch (on the root column's slices) joins the residual stream there.
// With last_position_only (the prefill's last layer) the gather to the root
// carries the chunk's last position alone: one token's slices.
void add_slice_residual(ChainBuilder& chain, const ModelSpec& m, bool slices_out, bool last_position_only) {
  const Dtype act = m.activation_dtype;
  const uint64_t d_slice = chain.geo().largest_row_share(m.d_model);
  chain.add("residual_slices", [&](const StepEnv& env) {
    return stream_compute_step(
        env, Work{d_slice * ElementwiseFlops::kAdd, dtype_bytes(act, 2 * d_slice), dtype_bytes(act, d_slice)}, act,
        dtype_bytes(act, d_slice));
  });
  if (slices_out) return;
  chain.add("gather_residual", [&](const StepEnv& env) {
    StepEnv one_token = env;
    if (last_position_only) one_token.tokens = 1;
    return gather_column_step(one_token, dtype_bytes(act, d_slice));
  });
}

void add_distributed_layer(ChainBuilder& chain, const ModelSpec& m, uint32_t layer, uint64_t max_context,
                           const SliceLayer& how) {
  const Dtype w = m.weight_dtype, act = m.activation_dtype;
  add_distributed_attention(chain, m, layer, max_context, how);
  chain.add("gate_up_proj", [&](const StepEnv& env) {
    return how.gemvs.column_to_row(env,
                                   GemvShape::matrix(m.d_model, mlp_width(m, m.ffn_dim), w).with_bias(m.mlp_bias, w));
  });
  // W_gate and W_up interleaved so that a column holds the gate and up sums of the same elements.
  const uint64_t ffn_slice = chain.geo().largest_column_share(m.ffn_dim);
  chain.add("activation", [&](const StepEnv& env) {
    return column_compute_step(
        env,
        Work{ffn_slice * workloads::activation_flops_per_element(m.mlp),
             workloads::activation_inputs(m.mlp) * chain.gemv_sum_bytes(ffn_slice), dtype_bytes(act, ffn_slice)},
        act, /*along_row=*/true);
  });
  chain.add("down_proj", [&](const StepEnv& env) {
    return how.gemvs.row_to_column(env, GemvShape::matrix(m.ffn_dim, m.d_model, w).with_bias(m.mlp_bias, w));
  });
  add_slice_residual(chain, m, how.slices_out, how.last_position_out);
}

// Where an expert block sits: its row, its place in the row, and the end of its row (an expert index).
struct TreePlace {
  uint32_t row, place, row_end;
};

// A combining stream of `elements` per token: the fp32 sums of the chunk's
// tokens (at most `chunk`) that experts [first, end) took (`tokens` per expert).
uint32_t combining_stream_bytes(const std::vector<uint32_t>& tokens, uint32_t first, uint32_t end, uint64_t elements,
                                uint64_t chunk) {
  uint64_t covered = 0;
  for (uint32_t e = first; e < end; ++e) covered += tokens[e];
  const uint64_t bytes = sum_bytes(elements) * std::min<uint64_t>(covered, chunk);
  if (bytes > UINT32_MAX) throw std::logic_error("an MoE combining stream exceeds 4 GiB");
  return uint32_t(bytes);
}

// The rows of `main` whose slices of the residual stream (row_share of
// d_model, in row order) hold elements [first, first + count): each row and
// how many of them it holds.
std::vector<std::pair<uint32_t, uint64_t>> rows_holding(const BlockGeometry& main, uint64_t d_model, uint64_t first,
                                                        uint64_t count) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  uint64_t row_first = 0;
  for (uint32_t i = 0; i < main.rows; ++i) {
    const uint64_t row_elements = main.row_share(d_model, i);
    const uint64_t lo = std::max(first, row_first), hi = std::min(first + count, row_first + row_elements);
    row_first += row_elements;
    if (lo < hi) out.emplace_back(i, hi - lo);
  }
  return out;
}

// Skip the next task of routed expert `own`'s block unless an expert of
// [first, end) (after `own`) is routed; a range holding a shared expert
// (routed and after) always streams, so it needs no guard. The guards count
// from the block's own expert, so blocks at the same place of their streams share programs.
void append_unless_routed(std::vector<Task>& out, uint32_t own, uint32_t first, uint32_t end, uint32_t routed,
                          uint32_t layer) {
  if (end <= routed)
    out.push_back(SkipUnlessExpertTask()
                      .own_expert(first - own)
                      .experts(end - first)
                      .moe_layer(layer)
                      .tasks(1)
                      .layer(uint16_t(layer)));
}

// A combining node's stream to its parent (tree and columns): expert e sends
// the sum with its own result added (`add`, as the sum passes) when it is
// routed or shared; otherwise it passes on the sum of the experts after it
// in its stream's range [e, end) when one of them is routed, and is silent.
void append_node_stream(std::vector<Task>& out, SendTask send, const Work& add, uint32_t e, uint32_t end,
                        uint32_t routed, uint32_t layer) {
  SendTask passing = send;
  passing.streamed(Work{}, Dtype::FP32);
  send.streamed(add, Dtype::FP32);
  if (e >= routed) {
    out.push_back(send);
    return;
  }
  out.push_back(SkipUnlessExpertTask().own_expert().moe_layer(layer).tasks(1).layer(uint16_t(layer)));
  out.push_back(send);
  if (e + 1 < end) {
    out.push_back(SkipIfExpertTask().own_expert().moe_layer(layer).tasks(end <= routed ? 2 : 1).layer(uint16_t(layer)));
    append_unless_routed(out, e, e + 1, end, routed, layer);
    out.push_back(passing);
  }
}

// mapping.moe_combine: tree. The expert blocks' results, in fp32, stream
// along each expert row to its first block (each block to its left
// neighbour) and up the first column, head to head, to the layer root. A
// block whose expert is routed (or shared) adds its result into the stream
// as it passes; another passes the sum on when a block after it in its row
// (a head: after it in the region) streams, and is silent otherwise. So the
// layer root takes in one vector, whatever the routing. Blocks are in index
// order, so "a block after it streams" is "an expert of that range is
// routed": SkipUnlessExpert / SkipIfExpert over the range guard each task.
void add_combining_tree(const RegionContext& context, Region& region, uint32_t layer,
                        const std::vector<TreePlace>& places, const std::vector<uint32_t>& tokens, uint16_t column_tag,
                        uint16_t row_tag, std::vector<DispatchStep::Expert>& experts) {
  const ModelSpec& m = *context.model;
  const HardwareSpec& hw = *context.hw;
  const uint32_t total = uint32_t(places.size()), routed = m.moe.n_experts;
  const uint16_t tag_layer = uint16_t(layer);
  // A stream carries the sums of the chunk's tokens that its experts [first, end) took.
  auto stream_bytes = [&](uint32_t first, uint32_t end) {
    return combining_stream_bytes(tokens, first, end, m.d_model, context.tokens);
  };
  uint32_t previous_head = 0;
  for (uint32_t e = 0; e < total; ++e) {
    const TreePlace& place = places[e];
    const bool head = place.place == 0;
    if (head && place.row > 0) {
      previous_head = e - 1;
      while (places[previous_head].place != 0) --previous_head;
    }
    const uint32_t end = head ? total : place.row_end;  // the block's stream covers experts [e, end)
    Block& block = region.blocks[1 + e];
    const BlockGeometry& parent =
        head ? (place.row == 0 ? region.blocks[0].geo : region.blocks[1 + previous_head].geo) : region.blocks[e].geo;
    DispatchStep::Expert& node = experts[e];
    std::vector<Task>& out = block.root_combine;
    if (e + 1 < place.row_end) {  // the row's next block
      node.row_child = int32_t(e + 1);
      block.combine_children.push_back(1 + e + 1);
      append_unless_routed(out, e, e + 1, place.row_end, routed, layer);
      out.push_back(
          WaitTask().tag(row_tag).messages(1).heads_only(stream_bytes(e + 1, place.row_end)).layer(tag_layer));
    }
    if (head && place.row_end < total) {  // the next row's head
      node.column_child = int32_t(place.row_end);
      block.combine_children.push_back(1 + place.row_end);
      append_unless_routed(out, e, place.row_end, total, routed, layer);
      out.push_back(
          WaitTask().tag(column_tag).messages(1).heads_only(stream_bytes(place.row_end, total)).layer(tag_layer));
    }
    // Row chains and the column chain alternate two colours each (after the dispatch's two).
    const uint32_t pattern = head ? 4 + place.row % 2 : 2 + place.place % 2;
    const uint32_t bytes = stream_bytes(e, end);
    SendTask send = root_to_root(block.geo, parent)
                        .bytes(bytes)
                        .tag(head ? column_tag : row_tag)
                        .relays(pattern >= context.colors_available ? 1 : 0)
                        .category(Category::Reduce)
                        .layer(tag_layer);
    // One fp32 add per element of its own result, as the sum passes.
    const uint64_t own_bytes = sum_bytes(uint64_t(m.d_model) * tokens[e]);
    const Work add{uint64_t(m.d_model) * tokens[e] * ElementwiseFlops::kAdd, 2 * own_bytes, own_bytes};
    append_node_stream(out, send, add, e, end, routed, layer);
    node.serialization = serialization_cycles(hw.fabric, bytes);
    node.latency = send_cycles(hw, send) - node.serialization;
    node.add_cycles = compute_cycles(hw.tile, Dtype::FP32, add);
  }
}

// mapping.moe_combine: columns. The dispatch on slices: the root multicasts
// the router's choice along the root row and down the first column, and each
// root-row tile down its column, to the first expert row; once the choice has
// passed it, each tile of the main block sends to the first expert row on
// its column the piece of its row's slice of the normed input (which the
// router's GEMV multicast along its row) that the expert columns there need:
// column j of an expert block takes slice j of the input. That tile (a
// chain's top, on its root row) multicasts the slice, with the choice, down
// the column, so every expert block's root row finds its input there; every
// expert tile takes that multicast before its guard (a chain top's: after).
class SliceDispatch {
 public:
  SliceDispatch(const RegionContext& context, const BlockGeometry& main, uint32_t chain_rows, uint32_t places,
                uint32_t expert_height, uint16_t choice_tag, uint16_t piece_tag, uint16_t layer)
      : fabric_(context.hw->fabric),
        chunk_(context.tokens),
        rows_(main.rows),
        choice_bytes_(8ull * context.model->moe.top_k),  // an expert index and its weight per choice
        choice_relays_(0 >= context.colors_available ? 1 : 0),
        piece_relays_(1 >= context.colors_available ? 1 : 0),
        choice_tag_(choice_tag),
        piece_tag_(piece_tag),
        layer_(layer),
        down_(main.down()) {
    const ModelSpec& m = *context.model;
    const uint32_t total = m.moe.n_experts + m.moe.n_shared_experts, cols = main.cols;
    const Dtype act = m.activation_dtype;
    columns_.assign(cols, {});
    for (uint32_t b = 0; b < places; ++b) {
      const uint32_t left = uint32_t(uint64_t(b) * cols / places), right = uint32_t(uint64_t(b + 1) * cols / places);
      const uint32_t blocks = std::min(chain_rows, total - std::min(total, b * chain_rows));
      BlockGeometry place = main;
      place.cols = right - left;
      place.row0_permille = 1000;
      place.column_prefix = nullptr;
      uint64_t first = 0;
      for (uint32_t c = left; c < right; ++c) {
        Column& column = columns_[c];
        column.expert_rows = blocks * expert_height;
        const uint64_t slice = place.column_share(m.d_model, c - left);
        column.slice_bytes = dtype_bytes(act, slice);
        for (const auto& [row, elements] : rows_holding(main, m.d_model, first, slice))
          column.sources.push_back({row, dtype_bytes(act, elements)});
        first += slice;
        // The first expert row's tile takes the pieces no earlier than the last arrives.
        for (const Source& source : column.sources)
          column.top_arrival = std::max(
              column.top_arrival, choice_at(source.row, c) + message_cycles(fabric_, rows_ - source.row, 0,
                                                                            piece_relays_, source.bytes * chunk_));
      }
    }
    // Each main tile's part: pass the choice on, send its pieces.
    auto choice_multicast = [&](Dir dir, uint32_t tiles) {
      return MulticastTask()
          .dir(dir)
          .tiles(tiles)
          .bytes(uint32_t(choice_bytes_))
          .tag(choice_tag)
          .relays(choice_relays_)
          .layer(layer);
    };
    std::vector<Task> out;
    for (uint32_t i = 0; i < rows_; ++i)
      for (uint32_t c = 0; c < cols; ++c) {
        out.clear();
        if (i == 0 && c == 0) {
          if (cols > 1) out.push_back(choice_multicast(main.across(), cols - 1));
        } else {
          out.push_back(WaitTask().tag(choice_tag).messages(1).layer(layer));
        }
        if (i == 0) out.push_back(choice_multicast(main.down(), rows_));  // to the first expert row
        for (const Source& source : columns_[c].sources)
          if (source.row == i)
            out.push_back(SendTask()
                              .dx(main.dx(int32_t(rows_ - i), 0))
                              .dy(main.dy(int32_t(rows_ - i), 0))
                              .bytes(uint32_t(source.bytes))
                              .tag(piece_tag)
                              .relays(piece_relays_)
                              .layer(layer));
        main_tasks_.push_back(out);
      }
  }
  // Per main tile i * columns + c: its part of the dispatch, one token's bytes.
  const TaskLists& main_tasks() const { return main_tasks_; }
  // From dispatch to the end of main tile (i, c)'s part: its sends do not hold it.
  uint64_t main_done(uint32_t i, uint32_t c) const { return choice_at(i, c); }
  // What the root-row tile on region column c of an expert block runs first: a
  // chain top's (`top`) takes the pieces and multicasts the slice on down the
  // column; a block's below it takes that multicast.
  std::vector<Task> expert_tasks(uint32_t c, bool top) const {
    const Column& column = columns_[c];
    if (!top) return {WaitTask().tag(piece_tag_).messages(1).layer(layer_)};
    std::vector<Task> out{WaitTask().tag(choice_tag_).messages(1).layer(layer_),
                          WaitTask().tag(piece_tag_).messages(uint32_t(column.sources.size())).layer(layer_)};
    // The input slice and the choice on, down the column to the expert rows below.
    if (column.expert_rows > 1)
      out.push_back(MulticastTask()
                        .dir(down_)
                        .tiles(column.expert_rows - 1)
                        .bytes(uint32_t(forward_bytes(column)))
                        .tag(piece_tag_)
                        .relays(piece_relays_)
                        .layer(layer_));
    return out;
  }
  // What every other tile of an expert block runs first, or with `last` after
  // its expert's work: the slice's multicast. It passes a chain top's other
  // tiles as its own GEMV's multicast from the same tile does, and may arrive
  // after it (it carries the choice, and a prefill expert's only its tokens):
  // they take it after the expert's work, which does not need it.
  std::vector<Task> expert_tasks_below(bool top, bool last) const {
    if (top != last) return {};
    return {WaitTask().tag(piece_tag_).messages(1).layer(layer_)};
  }
  // From dispatch to the choice and the input at expert row k (0: the first) of region column c.
  uint64_t arrival(uint32_t k, uint32_t c) const {
    const Column& column = columns_[c];
    const uint64_t sent = std::max(choice_at(rows_, c), column.top_arrival);
    if (k == 0) return sent;
    return sent + message_cycles(fabric_, k, 0, piece_relays_, forward_bytes(column));
  }

 private:
  struct Source {
    uint32_t row;    // of the main block
    uint64_t bytes;  // one token's
  };
  struct Column {
    uint32_t expert_rows = 0;  // rows of expert blocks on it
    uint64_t slice_bytes = 0;  // of the input its expert columns take, one token's
    std::vector<Source> sources;
    uint64_t top_arrival = 0;  // from dispatch to the last piece at the first expert row
  };
  // The chain top's multicast down the column: the slice and the choice, for the chunk.
  uint64_t forward_bytes(const Column& column) const { return (column.slice_bytes + choice_bytes_) * chunk_; }
  // The choice multicast along the root row to column c, then down it to row k.
  uint64_t choice_at(uint32_t k, uint32_t c) const { return choice_hops(c) + choice_hops(k); }
  uint64_t choice_hops(uint32_t hops) const {
    return hops == 0 ? 0 : message_cycles(fabric_, hops, 0, choice_relays_, choice_bytes_ * chunk_);
  }

  FabricParams fabric_;
  uint64_t chunk_;
  uint32_t rows_;  // of the main block
  uint64_t choice_bytes_;
  uint32_t choice_relays_, piece_relays_;
  uint16_t choice_tag_, piece_tag_, layer_;
  Dir down_;
  std::vector<Column> columns_;
  TaskLists main_tasks_;
};

// mapping.moe_combine: columns. The experts in the same place of every expert
// row form a chain down the region (expert e in row e % rows, place e / rows,
// so a chain holds a range of experts). Column j of each block's root row
// streams the fp32 sum of its slice up to the same column of the block above,
// adding its own scaled slice if its expert is routed (or shared) and
// passing the sum on if a block below it streams, as the tree does; the top
// block writes the sum out as activations and sends each piece to the layer's
// root-column tile holding those elements. Every top sends, whatever the
// routing, so each root-column tile awaits a fixed number of pieces.
ColumnCombine add_column_combine(const RegionContext& context, Region& region, uint32_t layer, uint32_t chain_rows,
                                 const std::vector<uint32_t>& tokens, uint16_t piece_tag, uint16_t chain_tag,
                                 std::vector<ColumnCombine::Node> nodes, const SliceDispatch& dispatch) {
  const ModelSpec& m = *context.model;
  const HardwareSpec& hw = *context.hw;
  const BlockGeometry& main = region.blocks[0].geo;
  const uint32_t total = uint32_t(nodes.size()), routed = m.moe.n_experts;
  const uint16_t tag_layer = uint16_t(layer);
  const Dtype act = m.activation_dtype;
  const uint64_t chunk = context.tokens;
  // A stream of `elements` carries the sums of the chunk's tokens that its experts [first, end) took.
  auto stream_bytes = [&](uint32_t first, uint32_t end, uint64_t elements) {
    return combining_stream_bytes(tokens, first, end, elements, chunk);
  };
  // The top's write-out: with its own slice added if its expert is routed (or shared), without if not.
  auto own_or_not = [&](uint32_t e, const Task& own, const Task& other, std::vector<Task>& out) {
    if (e >= routed) {
      out.push_back(own);
      return;
    }
    out.push_back(SkipUnlessExpertTask().own_expert().moe_layer(layer).tasks(1).layer(tag_layer));
    out.push_back(own);
    out.push_back(SkipIfExpertTask().own_expert().moe_layer(layer).tasks(1).layer(tag_layer));
    out.push_back(other);
  };
  ColumnCombine combine;
  combine.pieces.assign(main.rows, {});
  combine.sum.assign(main.rows, Work{});
  combine.dispatch_done.assign(main.rows, 0);
  combine.dispatch = dispatch.main_tasks();
  uint32_t chains = 0;
  for (uint32_t e = 0; e < total; ++e) {
    const uint32_t row = e % chain_rows, end = std::min(total, (e / chain_rows + 1) * chain_rows);
    Block& block = region.blocks[1 + e];
    const BlockGeometry& g = block.geo;
    ColumnCombine::Node& node = nodes[e];
    node.top = row == 0;
    chains += node.top ? 1 : 0;
    if (e + 1 < end) {
      node.child = int32_t(e + 1);
      block.combine_children.push_back(1 + e + 1);
    }
    node.latency.assign(g.cols, 0);
    node.serialization.assign(g.cols, 0);
    node.add_cycles.assign(g.cols, 0);
    node.finish_own_cycles.assign(g.cols, 0);
    node.finish_passing_cycles.assign(g.cols, 0);
    uint64_t first_element = 0;  // of column j's slice of the down projection
    std::vector<Task> out;
    for (uint32_t j = 0; j < g.cols; ++j) {
      out.clear();
      const uint64_t slice = g.column_share(m.d_model, j);
      if (node.child >= 0) {
        append_unless_routed(out, e, e + 1, end, routed, layer);
        out.push_back(
            WaitTask().tag(chain_tag).messages(1).heads_only(stream_bytes(e + 1, end, slice)).layer(tag_layer));
      }
      const uint64_t own_bytes = sum_bytes(slice * tokens[e]);
      const Work add{slice * tokens[e] * ElementwiseFlops::kAdd, 2 * own_bytes, own_bytes};
      if (!node.top) {
        // Chains alternate two colours (after the dispatch's two), so a router never both receives and forwards one.
        const uint32_t pattern = 2 + row % 2;
        const uint32_t bytes = stream_bytes(e, end, slice);
        SendTask send = root_to_root(g, region.blocks[e].geo)
                            .bytes(bytes)
                            .tag(chain_tag)
                            .relays(pattern >= context.colors_available ? 1 : 0)
                            .category(Category::Reduce)
                            .layer(tag_layer);
        append_node_stream(out, send, add, e, end, routed, layer);
        node.serialization[j] = serialization_cycles(hw.fabric, bytes);
        node.latency[j] = send_cycles(hw, send) - node.serialization[j];
        node.add_cycles[j] = compute_cycles(hw.tile, Dtype::FP32, add);
      } else {
        // The sums of every token of the chunk, written out as activations (its own slice added if routed).
        const uint64_t sums = sum_bytes(slice * chunk), written = dtype_bytes(act, slice * chunk);
        const Work own{add.flops, sums + own_bytes, written}, passing{0, sums, written};
        auto finish = [&](const Work& work) {
          return ComputeTask()
              .work(work)
              .dtype(Dtype::FP32)
              .category(Category::Reduce)
              .after_streams()
              .layer(tag_layer);
        };
        own_or_not(e, finish(own), finish(passing), out);
        node.finish_own_cycles[j] = compute_cycles(hw.tile, Dtype::FP32, own);
        node.finish_passing_cycles[j] = compute_cycles(hw.tile, Dtype::FP32, passing);
        // Each piece to the root-column tile holding those elements of the residual stream.
        for (const auto& [i, elements] : rows_holding(main, m.d_model, first_element, slice)) {
          const Task send = SendTask()
                                .dx(int32_t(main.x(i, 0)) - int32_t(g.x(0, j)))
                                .dy(int32_t(main.y(i, 0)) - int32_t(g.y(0, j)))
                                .dwafer(int32_t(main.wafer) - int32_t(g.wafer))
                                .bytes(uint32_t(dtype_bytes(act, elements * chunk)))
                                .tag(piece_tag)
                                .relays(4 >= context.colors_available ? 1 : 0)
                                // Up the column first, then along row i: the pieces for
                                // different rows share no link (along the row, then up
                                // the root column, they would all cross its links).
                                .y_first(g.down() == Dir::South)
                                .layer(tag_layer);
          out.push_back(send);
          combine.pieces[i].push_back({e, j, send_cycles(hw, send)});
        }
      }
      block.row_combine.push_back(out);
      first_element += slice;
    }
  }
  // Each root-column tile adds the pieces of every chain, after its part of the dispatch.
  for (uint32_t i = 0; i < main.rows; ++i) {
    const uint64_t elements = main.row_share(m.d_model, i);
    if (!combine.pieces[i].empty())
      combine.sum[i] = Work{(chains - 1) * elements * ElementwiseFlops::kAdd, chains * dtype_bytes(act, elements),
                            dtype_bytes(act, elements)};
    combine.dispatch_done[i] = dispatch.main_done(i, 0);
  }
  combine.nodes = std::move(nodes);
  return combine;
}

// MoE layer: attention block on top, expert blocks in rows below it.
void build_moe(const RegionContext& context, Region& region, uint32_t layer) {
  const ModelSpec& m = *context.model;
  const BlockGeometry& box = region.box;
  const uint32_t routed = m.moe.n_experts, total = routed + m.moe.n_shared_experts;
  uint64_t experts_bytes = 0;
  for (const workloads::MatrixSpec& matrix : workloads::layer_matrices(m, layer))
    if (matrix.role == workloads::MatrixRole::ExpertGate || matrix.role == workloads::MatrixRole::ExpertUp ||
        matrix.role == workloads::MatrixRole::ExpertDown)
      experts_bytes += matrix.bytes();
  // The attention block holds the layer's KV cache too, in as many copies as it takes.
  const uint64_t attention_bytes =
      region_weight_bytes(m, RegionKind::Moe, int32_t(layer)) - experts_bytes +
      region_kv_bytes(m, RegionKind::Moe, int32_t(layer), context.max_context, slice_layer(context).kv_head_copies);
  // Expert rows take their share of the region's rows; unless told how many
  // experts go in a row, enough to make blocks near square.
  const double share = context.options->moe_attention_share > 0
                           ? 1.0 - context.options->moe_attention_share
                           : double(experts_bytes) / double(experts_bytes + attention_bytes);
  const uint32_t expert_rows_total = std::min<uint32_t>(box.rows - 1, uint32_t(std::llround(double(box.rows) * share)));
  const double tiles_per_expert = std::max(1.0, double(expert_rows_total) * box.cols / total);
  const double asked = context.experts_per_row > 0 ? double(context.experts_per_row)
                                                   : std::round(box.cols / std::sqrt(tiles_per_expert));
  uint32_t per_row = uint32_t(std::clamp<double>(asked, 1.0, double(std::min(total, box.cols))));
  const uint32_t expert_row_count = (total + per_row - 1) / per_row;
  per_row = (total + expert_row_count - 1) / expert_row_count;  // balance the rows
  region.experts_per_row = per_row;
  const uint32_t expert_height = std::max<uint32_t>(1, expert_rows_total / expert_row_count);
  if (expert_height * expert_row_count >= box.rows)
    throw TooFewRows(region.name + ": too few rows for its experts");  // the layout sizes regions first
  const uint32_t attention_rows = box.rows - expert_height * expert_row_count;

  region.blocks.reserve(1 + total);  // `main` and the chain builder hold a reference to blocks[0]
  region.blocks.emplace_back();
  Block& main = region.blocks[0];
  main.geo = box;
  main.geo.rows = attention_rows;
  ChainBuilder chain(context, main_block_lowering(RegionKind::Moe, *context.options), main, uint16_t(layer),
                     kTagFirstStep);
  const bool distributed = context.options->dataflow == Dataflow::Distributed;
  const uint64_t vector_bytes = dtype_bytes(m.activation_dtype, m.d_model);
  const uint64_t d_slice_bytes = dtype_bytes(m.activation_dtype, main.geo.largest_row_share(m.d_model));
  const bool tree = context.options->moe_combine == MoeCombine::Tree;
  const bool columns = context.options->moe_combine == MoeCombine::Columns;
  if (columns && !distributed) throw std::logic_error("mapping.moe_combine: columns needs the distributed dataflow");
  const GemvShape router =
      GemvShape::matrix(m.d_model, routed, m.weight_dtype).with_bias(m.moe.router_bias, m.weight_dtype);
  if (columns) {
    // Router on the slices: logits on the root row, gathered along it.
    add_distributed_attention(chain, m, layer, context.max_context, slice_layer(context));
    chain.add("router", [&](const StepEnv& env) { return gemv_to_row_step(env, router); });
    chain.add("gather_logits", [&](const StepEnv& env) {
      return gather_row_step(env, sum_bytes(main.geo.largest_column_share(routed)));
    });
  } else {
    if (distributed) {
      add_distributed_attention(chain, m, layer, context.max_context, slice_layer(context));
      // The router and the dispatch take the normed vector at the root.
      chain.add("gather_mlp_input", [&](const StepEnv& env) { return gather_column_step(env, d_slice_bytes); });
    } else {
      add_attention(chain, m, layer, context.max_context);
    }
    // Router: logits on the root column, gathered.
    chain.add("router", [&](const StepEnv& env) { return gemv_to_column_step(env, router); });
    chain.add("gather_logits",
              [&](const StepEnv& env) { return gather_column_step(env, 4 * ceil_div(routed, attention_rows)); });
  }
  chain.add("top_k", [&](const StepEnv& env) {  // over the gathered fp32 logits, at the root
    return root_compute_step(env, Work{workloads::top_k_flops(m), sum_bytes(routed), 4ull * m.moe.top_k}, Dtype::FP32,
                             Category::Compute);
  });
  // The dispatch step's own tags: results (root), the column chain and the row
  // chains (tree), or the pieces and the column chains (columns).
  const uint16_t return_tag = chain.next_tag();
  const uint16_t row_tag = uint16_t(return_tag + 1);
  const uint16_t dispatch_tag = uint16_t(return_tag + (tree || columns ? 2 : 1));
  // Columns: the choice takes the dispatch tag, the input's pieces the next.
  const uint16_t expert_first_tag = uint16_t(dispatch_tag + (columns ? 2 : 1));
  uint16_t experts_end_tag = expert_first_tag;
  // A prefill chunk (context.tokens > 1) goes to every expert, each taking
  // context.expert_tokens of its tokens' top-k choices (by default an even
  // share); a shared expert takes every token. One decode token reaches top_k experts.
  const uint32_t chunk = context.tokens;
  const uint32_t routed_tokens =
      context.expert_tokens > 0 ? context.expert_tokens : uint32_t(ceil_div(uint64_t(chunk) * m.moe.top_k, routed));
  const uint32_t routed_results = chunk > 1 ? routed : m.moe.top_k;
  const uint64_t chunk_bytes = vector_bytes * chunk;

  // Expert blocks, row by row; the first block of each row is its dispatch head.
  // The root dataflow sends the vector to the first row's head, which
  // multicasts it down the first column to the others; on slices the root
  // multicasts it down the region's first column itself, past the root
  // column's tiles (`passing`), so that no head sends two multicasts.
  std::vector<Task> head_sends, passing;
  std::optional<SliceDispatch> slice_dispatch;
  if (columns)
    slice_dispatch.emplace(context, main.geo, expert_row_count, per_row, expert_height, dispatch_tag,
                           uint16_t(dispatch_tag + 1), uint16_t(layer));
  if (distributed && !columns) {
    head_sends.push_back(MulticastTask()
                             .dir(box.down())
                             .tiles(box.rows - 1)
                             .bytes(vector_bytes)
                             .tag(dispatch_tag)
                             .layer(uint16_t(layer)));
    passing.push_back(WaitTask().tag(dispatch_tag).messages(1).layer(uint16_t(layer)));
  }
  std::vector<DispatchStep::Expert> experts;
  std::vector<ColumnCombine::Node> column_nodes;
  std::vector<uint32_t> tokens;  // per expert block: tokens of the chunk it takes
  std::vector<TreePlace> rows;
  const FixedInputs fixed;
  for (uint32_t e = 0; e < total; ++e) {
    // Tree and root: experts fill the rows in order, a short last row's blocks
    // wider. Columns: they fill the places down the rows, every place as wide
    // in every row, so each place's blocks form a chain of aligned columns.
    const uint32_t row = columns ? e % expert_row_count : e / per_row;
    const uint32_t b = columns ? e / expert_row_count : e % per_row;
    const uint32_t in_row = columns ? std::min(per_row, (total - row + expert_row_count - 1) / expert_row_count)
                                    : std::min(per_row, total - row * per_row);
    const uint32_t places = columns ? per_row : in_row;
    const uint32_t top = attention_rows + row * expert_height;
    const uint32_t left = uint32_t(uint64_t(b) * box.cols / places),
                   right = uint32_t(uint64_t(b + 1) * box.cols / places);
    Block expert;
    expert.geo = box;
    expert.geo.x0 = box.x(top, left);
    expert.geo.y0 = box.y(top, left);
    expert.geo.rows = expert_height;
    expert.geo.cols = right - left;
    expert.geo.row0_permille = 1000;  // experts split their weights evenly
    expert.geo.column_prefix = nullptr;
    expert.expert = e < routed ? int32_t(e) : -1;
    expert.moe_layer = layer;
    expert.dispatch_bytes = chunk_bytes;  // one multicast reaches every expert: it carries the whole chunk
    expert.dispatch_tag = dispatch_tag;
    if (columns) {
      for (uint32_t c = left; c < right; ++c) expert.dispatch_in.push_back(slice_dispatch->expert_tasks(c, row == 0));
      expert.dispatch_below = slice_dispatch->expert_tasks_below(row == 0, false);
      expert.dispatch_below_last = slice_dispatch->expert_tasks_below(row == 0, true);
    } else {
      expert.on_dispatch_column = b == 0;
      expert.dispatch_row_tiles = b == 0 ? box.cols - 1 : 0;  // a row's head multicasts the vector along its row
      expert.dispatch_column_tiles = !distributed && b == 0 && row == 0 ? expert_row_count * expert_height - 1 : 0;
    }
    RegionContext expert_context = context;
    expert_context.tokens = expert.expert >= 0 ? routed_tokens : chunk;
    const uint64_t result_bytes = vector_bytes * expert_context.tokens;
    ChainBuilder expert_chain(expert_context, workloads::LayerLowering::Expert, expert, uint16_t(layer),
                              expert_first_tag);
    // Columns: the input's slices reach the root row down its columns; else the dispatch multicasts the vector along
    // it.
    add_ffn(expert_chain, m, m.moe.expert_ffn_dim, m.moe_weight_dtype, m.mlp_bias, dispatch_tag, columns);
    // A routed expert's result times its router weight (shared experts are
    // unweighted): on the root row's slices with the distributed dataflow, at the root after the gather without.
    const bool weighted = expert.expert >= 0;
    if (weighted && distributed) {
      const uint64_t slice = expert.geo.largest_column_share(m.d_model);
      expert_chain.add("expert_scale", [&](const StepEnv& env) {
        return column_compute_step(env,
                                   Work{slice * ElementwiseFlops::kScale, expert_chain.gemv_sum_bytes(slice),
                                        dtype_bytes(m.activation_dtype, slice)},
                                   m.activation_dtype, /*along_row=*/true);
      });
    }
    if (!columns) add_gather_down(expert_chain, m);
    if (weighted && !distributed)
      expert_chain.add("expert_scale", [&](const StepEnv& env) {
        return root_compute_step(env, Work{m.d_model * ElementwiseFlops::kScale, vector_bytes, vector_bytes},
                                 m.activation_dtype, Category::Compute);
      });
    experts_end_tag = std::max(experts_end_tag, expert_chain.next_tag());
    const Task back = root_to_root(expert.geo, main.geo).bytes(result_bytes).tag(return_tag).layer(uint16_t(layer));
    if (!tree && !columns) expert.root_epilogue.push_back(back);
    if (!distributed && b == 0 && row == 0)
      head_sends.push_back(
          root_to_root(main.geo, expert.geo).bytes(vector_bytes).tag(dispatch_tag).layer(uint16_t(layer)));
    // head_sends carry one token's vector: the Dispatch step's emit scales them with the chunk.
    uint64_t head_arrival = message_cycles(context.hw->fabric, top, 0, 0, chunk_bytes);
    if (!distributed) {
      const uint32_t column_hops = row * expert_height;
      Task head_send = head_sends.front();
      head_send.bytes = uint32_t(chunk_bytes);
      head_arrival = send_cycles(*context.hw, head_send) +
                     (column_hops == 0 ? 0 : message_cycles(context.hw->fabric, column_hops, 0, 0, chunk_bytes));
    }
    // Contention-free time from dispatch to the input on each column of the block's root row.
    Front front{FrontKind::Row, {}, std::vector<Timed>(expert.geo.cols), {}};
    for (uint32_t j = 0; j < expert.geo.cols; ++j) {
      const uint32_t hops = left + j;
      front.at[j] = columns ? Timed{}.after(slice_dispatch->arrival(row * expert_height, left + j), Category::Fabric)
                            : Timed{}
                                  .after(head_arrival, Category::Fabric)
                                  .after(hops == 0 ? 0 : message_cycles(context.hw->fabric, hops, 0, 0, chunk_bytes),
                                         Category::Fabric);
    }
    const std::vector<Timed> arrival = front.at;
    for (const auto& step : expert.steps) front = step->latency(front, fixed, 0);
    if (columns) {
      if (front.kind != FrontKind::Row) throw std::logic_error("an expert's chain does not end on its root row");
      ColumnCombine::Node node;
      node.routed_index = expert.expert;
      node.arrival = arrival;
      node.ready = front.at;
      column_nodes.push_back(std::move(node));
    } else {
      DispatchStep::Expert timing;
      timing.routed_index = expert.expert;
      timing.arrival = arrival[0];
      timing.ready = front.root;
      timing.result = front.root.after(send_cycles(*context.hw, back), Category::Fabric);
      experts.push_back(timing);
    }
    tokens.push_back(expert_context.tokens);
    rows.push_back({row, b, e - b + in_row});
    region.blocks.push_back(std::move(expert));
  }
  if (columns) {
    ColumnCombine combine = add_column_combine(context, region, layer, expert_row_count, tokens, return_tag, row_tag,
                                               std::move(column_nodes), *slice_dispatch);
    chain.add("experts", [&](const StepEnv& env) { return moe_columns_dispatch_step(env, std::move(combine), layer); });
    chain.skip_tags_to(experts_end_tag);
    add_slice_residual(chain, m, context.slices_out, context.last_position_out);
    return;
  }
  if (tree) add_combining_tree(context, region, layer, rows, tokens, return_tag, row_tag, experts);
  // Root: the root sums the (scaled) results. Tree: the experts have added
  // them into the fp32 sum, which the root writes out as activations as it arrives.
  const uint64_t results = m.moe.top_k + m.moe.n_shared_experts;
  const Work combine = tree ? Work{0, sum_bytes(m.d_model), vector_bytes}
                            : Work{results * m.d_model * ElementwiseFlops::kAdd, results * vector_bytes, vector_bytes};
  chain.add("experts", [&](const StepEnv& env) {
    return moe_dispatch_step(env, head_sends, passing, experts, layer, routed_results + m.moe.n_shared_experts, combine,
                             tree, sum_bytes(m.d_model));
  });
  chain.skip_tags_to(experts_end_tag);
  if (!distributed) {
    chain.add("residual", [&](const StepEnv& env) {
      return root_compute_step(env, residual_work(m), m.activation_dtype, Category::Compute);
    });
    return;
  }
  // The experts' sum back to the slices of the residual stream.
  chain.add("scatter_moe_output",
            [&](const StepEnv& env) { return column_broadcast_step(env, vector_bytes, d_slice_bytes); });
  add_slice_residual(chain, m, context.slices_out, context.last_position_out);
}

}  // namespace

bool slices_handoff(const MappingOptions& options, RegionKind from, RegionKind to) {
  return options.slices_handoff() && !(from == RegionKind::Embedding && to == RegionKind::Head);
}

uint64_t send_cycles(const HardwareSpec& hw, const Task& send) {
  if (send.dwafer != 0) return offwafer_message_cycles(hw, send.bytes);
  return route_message_cycles(hw.fabric, send);
}

std::vector<Task> Block::program(uint32_t i, uint32_t j) const {
  std::vector<Task> tasks;
  program(i, j, tasks);
  return tasks;
}

void Block::program(uint32_t i, uint32_t j, std::vector<Task>& tasks) const {
  tasks.clear();
  const bool root = i == geo.root_i() && j == geo.root_j();
  auto edge = [&](const std::vector<std::vector<Task>>& line, const std::vector<Task>& at_root) {
    if (j == geo.root_j() && !line.empty())
      tasks.insert(tasks.end(), line[i].begin(), line[i].end());
    else if (root)
      tasks.insert(tasks.end(), at_root.begin(), at_root.end());
  };
  edge(line_prologue, root_prologue);
  const size_t body = tasks.size();
  for (const auto& step : steps) step->emit_tokens(i, j, tasks);
  edge(line_epilogue, root_epilogue);
  if (dispatch_bytes == 0) return;
  // The combining tree's or chain's part runs either way.
  size_t unguarded = 0;
  if (root) {
    tasks.insert(tasks.end(), root_combine.begin(), root_combine.end());
    unguarded += root_combine.size();
  }
  if (i == 0 && j < row_combine.size()) {
    tasks.insert(tasks.end(), row_combine[j].begin(), row_combine[j].end());
    unguarded += row_combine[j].size();
  }
  if (i > 0) {
    tasks.insert(tasks.end(), dispatch_below_last.begin(), dispatch_below_last.end());
    unguarded += dispatch_below_last.size();
  }

  // Expert block: the tiles that carry the dispatched vector take (and pass) it
  // first; the rest of the block runs only if the expert is routed.
  size_t guarded = body;
  auto forward = [&](Dir dir, uint32_t count) {
    const Task multicast =
        MulticastTask().dir(dir).tiles(count).bytes(dispatch_bytes).tag(dispatch_tag).layer(uint16_t(moe_layer));
    tasks.insert(tasks.begin() + long(guarded++), multicast);
  };
  if (!dispatch_in.empty()) {
    // The root row's tiles take the input as dispatch_in says; the others as dispatch_below does.
    const std::vector<Task>& first = i == 0 ? dispatch_in[j] : dispatch_below;
    tasks.insert(tasks.begin() + long(body), first.begin(), first.end());
    guarded = body + first.size();
  } else if (i == 0) {
    guarded = body + 1;  // the dispatch wait emitted by the first step
    if (root && dispatch_row_tiles > 0) forward(geo.across(), dispatch_row_tiles);
    if (root && dispatch_column_tiles > 0) forward(geo.down(), dispatch_column_tiles);
  } else if (j == 0 && on_dispatch_column) {
    // The column multicast passes here on its way to the next row's head.
    const Task wait = WaitTask().tag(dispatch_tag).messages(1).layer(uint16_t(moe_layer));
    tasks.insert(tasks.begin() + long(body), wait);
    guarded = body + 1;
  }
  if (expert >= 0) {
    const Task guard = SkipUnlessExpertTask()
                           .expert(Task::kTileParam)  // experts of the same shape share programs
                           .moe_layer(moe_layer)
                           .tasks(uint32_t(tasks.size() - unguarded - guarded))
                           .layer(uint16_t(moe_layer));
    tasks.insert(tasks.begin() + long(guarded), guard);
  }
}

namespace {

// The front a region's chain starts from when its input is complete at `start`.
Front entry_front(const Region& region, const Timed& start) {
  if (!region.slices_in) return Front::at_root(start);
  Front front;
  front.kind = FrontKind::Column;
  front.at.assign(region.line_tiles(), start);
  return front;
}

}  // namespace

Front Region::run(Front front, size_t first, size_t last, const IterationInputs& inputs, uint64_t iteration,
                  std::vector<Timed>* line_done, const std::vector<Timed>* line_free) const {
  front = run_steps(std::move(front), first, last, inputs, iteration, line_done, line_free);
  if (line_done && front.kind == FrontKind::Root && !line_done->empty())
    (*line_done)[blocks[0].geo.root_i()] = front.root;
  return front;
}

Front Region::run_steps(Front front, size_t first, size_t last, const IterationInputs& inputs, uint64_t iteration,
                        std::vector<Timed>* line_done, const std::vector<Timed>* line_free) const {
  const auto& steps = blocks[0].steps;
  bool clamped = line_free == nullptr;
  for (size_t s = first; s < last; ++s) {
    front = clamped ? steps[s]->latency(front, inputs, iteration)
                    : steps[s]->latency_after(front, inputs, iteration, *line_free);
    if (front.kind == FrontKind::Column) {
      // The data's first arrival on the root column: a tile still busy with the previous iteration takes it later.
      if (!clamped)
        for (size_t i = 0; i < front.at.size(); ++i) front.at[i] = later((*line_free)[i], front.at[i]);
      clamped = true;
      if (line_done) *line_done = front.at;
    } else if (!front.line_done.empty()) {
      if (line_done) *line_done = std::move(front.line_done);
      front.line_done.clear();  // consumed: the next steps' fronts must not carry it on
    }
  }
  return front;
}

size_t Region::head_steps() const {
  if (!slices_in) return 0;
  const auto& steps = blocks[0].steps;
  for (size_t s = 0; s < steps.size(); ++s)
    if (steps[s]->output() == FrontKind::Root) return s + 1;
  throw std::logic_error(name + ": a chain that takes slices never brings them to its root");
}

Timed Region::finish(const Timed& start, const IterationInputs& inputs, uint64_t iteration) const {
  return run(entry_front(*this, start), 0, blocks[0].steps.size(), inputs, iteration).latest();
}

bool Region::reads_context(size_t first, size_t last) const {
  const FixedInputs fixed;
  const ContextWatch watched(fixed);
  run(run(entry_front(*this, Timed{}), 0, first, fixed, 0), first, last, watched, 0);
  return watched.read();
}

std::vector<std::pair<std::string, uint64_t>> Region::step_cycles(const IterationInputs& inputs,
                                                                  uint64_t iteration) const {
  std::vector<std::pair<std::string, uint64_t>> out;
  Front front = entry_front(*this, Timed{});
  for (const auto& step : blocks[0].steps) {
    const uint64_t before = front.latest().cycle;
    front = step->latency(front, inputs, iteration);
    out.emplace_back(step->label(), front.latest().cycle - before);
  }
  return out;
}

uint64_t region_weight_bytes(const ModelSpec& m, RegionKind kind, int32_t layer) {
  const Dtype w = m.weight_dtype;
  switch (kind) {
    case RegionKind::Embedding: return dtype_bytes(w, embedding_elements(m));
    case RegionKind::Head:
      return dtype_bytes(w, uint64_t(m.vocab_size) * m.d_model) + dtype_bytes(w, workloads::final_norm_params(m)) +
             (m.lm_head_bias ? dtype_bytes(w, m.vocab_size) : 0);
    case RegionKind::Dense:
    case RegionKind::Moe: {
      uint64_t bytes = dtype_bytes(w, workloads::layer_vector_params(m, uint32_t(layer)));
      for (const workloads::MatrixSpec& matrix : workloads::layer_matrices(m, uint32_t(layer))) bytes += matrix.bytes();
      return bytes;
    }
  }
  return 0;
}

uint64_t region_kv_bytes(const ModelSpec& m, RegionKind kind, int32_t layer, uint64_t max_context,
                         uint32_t kv_head_copies) {
  if (kind != RegionKind::Dense && kind != RegionKind::Moe) return 0;
  return m.attended_positions(uint32_t(layer), max_context) * workloads::kv_bytes_per_position(m) * kv_head_copies;
}

std::vector<uint64_t> region_timing_class(const ModelSpec& m, RegionKind kind, int32_t layer, const BlockGeometry& box,
                                          bool slices_in, bool slices_out) {
  std::vector<uint64_t> key = {uint64_t(kind),       box.rows,          box.cols,
                               box.across_is_x,      box.row0_permille, uint64_t(slices_in),
                               uint64_t(slices_out), box.middle_roots,  box.relieved_row};
  if (box.column_prefix) key.insert(key.end(), box.column_prefix->begin(), box.column_prefix->end());
  if (kind != RegionKind::Dense && kind != RegionKind::Moe) return key;
  key.push_back(attention_shape(m, uint32_t(layer)).window);
  key.push_back(workloads::layer_vector_params(m, uint32_t(layer)));
  for (const workloads::MatrixSpec& matrix : workloads::layer_matrices(m, uint32_t(layer))) {
    key.insert(key.end(), {uint64_t(matrix.role), matrix.d_in, matrix.d_out, matrix.bias, uint64_t(matrix.dtype),
                           uint64_t(matrix.bias_dtype), uint64_t(int64_t(matrix.expert))});
  }
  return key;
}

std::string region_name(RegionKind kind, int32_t layer) {
  return kind == RegionKind::Embedding ? "embedding"
         : kind == RegionKind::Head    ? "lm_head"
                                       : "layer " + std::to_string(layer);
}

Region build_region(const RegionContext& context, RegionKind kind, int32_t layer, const BlockGeometry& box) {
  const ModelSpec& m = *context.model;
  Region region;
  region.kind = kind;
  region.layer = layer;
  region.box = box;
  // Expert blocks and their dispatch keep the root at the block's corner (docs/MAPPING.md, "Middle roots").
  const LineRoot root = context.options->line_root;
  region.box.middle_roots =
      kind != RegionKind::Moe && (root == LineRoot::Middle || (root == LineRoot::MiddleInDecode && !context.prefill));
  region.name = region_name(kind, layer);
  if (kind == RegionKind::Moe) {
    build_moe(context, region, uint32_t(layer));
  } else {
    region.blocks.emplace_back();
    Block& main = region.blocks[0];
    main.geo = region.box;
    ChainBuilder chain(context, main_block_lowering(kind, *context.options), main, uint16_t(std::max(layer, 0)),
                       kTagFirstStep);
    const Dtype w = m.weight_dtype, act = m.activation_dtype;
    if (kind == RegionKind::Embedding) {
      chain.add("lookup", [&](const StepEnv& env) {
        return lookup_step(env, embedding_elements(m), w, dtype_bytes(act, m.d_model));
      });
      if (m.positions == workloads::PositionKind::Learned)  // the position row is added to the token's
        chain.add("position_add", [&](const StepEnv& env) {
          return root_compute_step(env, work_of(workloads::position_add_cost(m, 1)), act, Category::Compute);
        });
      if (context.slices_out)  // the first layer's scatter, done here: the slices leave from the root column
        chain.add("scatter", [&](const StepEnv& env) {
          return column_broadcast_step(env, dtype_bytes(act, m.d_model),
                                       dtype_bytes(act, box.largest_row_share(m.d_model)));
        });
    } else if (kind == RegionKind::Head) {
      if (context.slices_in)  // the last layer's gather, done here: the slices arrive on the root column
        chain.add("gather_input", [&](const StepEnv& env) {
          return gather_column_step(env, dtype_bytes(act, box.largest_row_share(m.d_model)));
        });
      chain.add("final_norm", [&](const StepEnv& env) {
        return root_compute_step(env, norm_work(m), act, Category::Compute, workloads::final_norm_params(m), w);
      });
      chain.add("lm_head_proj", [&](const StepEnv& env) {
        return gemv_to_column_step(env, GemvShape::matrix(m.d_model, m.vocab_size, w).with_bias(m.lm_head_bias, w));
      });
      const uint64_t slice = box.largest_row_share(m.vocab_size);  // local argmax over the slice
      chain.add("argmax_slice", [&](const StepEnv& env) {
        return column_compute_step(env, Work{slice * ElementwiseFlops::kArgmax, chain.gemv_sum_bytes(slice), 8},
                                   Dtype::FP32);
      });
      chain.add("argmax", [&](const StepEnv& env) { return gather_column_step(env, 8, /*reduce=*/true); });
      chain.add("sample", [&](const StepEnv& env) {
        return root_compute_step(env, Work{16, 8, 4}, Dtype::FP32, Category::Compute);  // sampling
      });
    } else if (context.options->dataflow == Dataflow::Distributed) {
      add_distributed_layer(chain, m, uint32_t(layer), context.max_context, slice_layer(context));
    } else {
      add_attention(chain, m, uint32_t(layer), context.max_context);
      add_ffn(chain, m, m.ffn_dim, w, m.mlp_bias, -1);
      add_gather_down(chain, m);
      chain.add("residual",
                [&](const StepEnv& env) { return root_compute_step(env, residual_work(m), act, Category::Compute); });
    }
  }
  if (kind == RegionKind::Dense || kind == RegionKind::Moe)
    region.kv_bytes_per_position = workloads::kv_bytes_per_position(m);
  region.slices_in = context.slices_in;
  region.slices_out = context.slices_out;
  region.timing_class = region_timing_class(m, kind, layer, region.box, region.slices_in, region.slices_out);
  // Its closing gather carries one position: it times unlike the rest of its class.
  if (context.last_position_out) region.timing_class.push_back(1);
  return region;
}

}  // namespace wafersim::mapping
