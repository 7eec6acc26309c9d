#include "workloads/model_spec.h"

#include <algorithm>

namespace wafersim::workloads {

bool ModelSpec::is_moe_layer(uint32_t layer) const {
  if (moe.n_experts == 0) return false;
  return std::binary_search(moe.layers.begin(), moe.layers.end(), layer);
}

uint32_t ModelSpec::rotated_dims() const {
  if (positions != PositionKind::Rotary) return 0;
  return rotary_dim == 0 ? head_dim : rotary_dim;
}

bool ModelSpec::has_sliding_window(uint32_t layer) const {
  if (sliding_window == 0) return false;
  return sliding_window_every == 0 || layer % sliding_window_every == 0;
}

uint64_t ModelSpec::attended_positions(uint32_t layer, uint64_t context) const {
  return has_sliding_window(layer) ? std::min<uint64_t>(context, sliding_window) : context;
}

uint64_t MatrixSpec::params() const { return d_in * d_out + (bias ? d_out : 0); }

uint64_t MatrixSpec::bytes() const {
  return dtype_bytes(dtype, d_in * d_out) + (bias ? dtype_bytes(bias_dtype, d_out) : 0);
}

namespace {

MatrixSpec matrix(std::string name, MatrixRole role, uint64_t d_in, uint64_t d_out, bool bias, Dtype dtype,
                  Dtype bias_dtype, int32_t expert = -1) {
  MatrixSpec m;
  m.name = std::move(name);
  m.role = role;
  m.d_in = d_in;
  m.d_out = d_out;
  m.bias = bias;
  m.dtype = dtype;
  m.bias_dtype = bias_dtype;
  m.expert = expert;
  return m;
}

// One feed-forward block (dense MLP, shared expert or routed expert), in execution order.
void append_ffn(const ModelSpec& model, std::vector<MatrixSpec>& out, const std::string& prefix, uint64_t width,
                Dtype dtype, bool expert_roles, int32_t expert) {
  const MatrixRole gate = expert_roles ? MatrixRole::ExpertGate : MatrixRole::Gate;
  const MatrixRole up = expert_roles ? MatrixRole::ExpertUp : MatrixRole::Up;
  const MatrixRole down = expert_roles ? MatrixRole::ExpertDown : MatrixRole::Down;
  const Dtype bias_dtype = model.weight_dtype;
  if (gated(model.mlp))
    out.push_back(matrix(prefix + "gate_proj", gate, model.d_model, width, model.mlp_bias, dtype, bias_dtype, expert));
  out.push_back(matrix(prefix + "up_proj", up, model.d_model, width, model.mlp_bias, dtype, bias_dtype, expert));
  out.push_back(matrix(prefix + "down_proj", down, width, model.d_model, model.mlp_bias, dtype, bias_dtype, expert));
}

uint64_t norm_params(const ModelSpec& model, uint64_t width) {
  return model.norm == NormKind::LayerNorm ? 2 * width : width;  // LayerNorm adds a bias
}

}  // namespace

namespace {

// Multi-head latent attention's matrices, as Hugging Face's DeepSeek-V3 names
// them, but kv_b_proj (kv_lora_rank -> n_heads x (qk_nope_head_dim + v_head_dim))
// split into its key half W_UK (k_up_proj) and value half W_UV (v_up_proj),
// which decode applies at different places.
void append_mla(const ModelSpec& model, std::vector<MatrixSpec>& out) {
  const MlaSpec& mla = model.mla;
  const uint64_t heads = model.n_heads;
  const Dtype w = model.weight_dtype;
  out.push_back(matrix("q_a_proj", MatrixRole::QDown, model.d_model, mla.q_lora_rank, false, w, w));
  out.push_back(matrix("kv_a_proj_with_mqa", MatrixRole::KvDown, model.d_model,
                       uint64_t(mla.kv_lora_rank) + mla.qk_rope_head_dim, false, w, w));
  out.push_back(matrix("q_b_proj", MatrixRole::QUp, mla.q_lora_rank,
                       heads * (uint64_t(model.head_dim) + mla.qk_rope_head_dim), false, w, w));
  out.push_back(matrix("k_up_proj", MatrixRole::KUp, mla.kv_lora_rank, heads * model.head_dim, false, w, w));
  out.push_back(matrix("v_up_proj", MatrixRole::VUp, mla.kv_lora_rank, heads * mla.v_head_dim, false, w, w));
  out.push_back(matrix("o_proj", MatrixRole::O, heads * mla.v_head_dim, model.d_model, model.o_bias, w, w));
}

}  // namespace

std::vector<MatrixSpec> layer_matrices(const ModelSpec& model, uint32_t layer) {
  std::vector<MatrixSpec> out;
  const uint64_t q_width = uint64_t(model.n_heads) * model.head_dim;
  const uint64_t kv_width = uint64_t(model.n_kv_heads) * model.head_dim;
  const Dtype w = model.weight_dtype;
  if (model.is_mla()) {
    append_mla(model, out);
  } else {
    out.push_back(matrix("q_proj", MatrixRole::Q, model.d_model, q_width, model.qkv_bias, w, w));
    out.push_back(matrix("k_proj", MatrixRole::K, model.d_model, kv_width, model.qkv_bias, w, w));
    out.push_back(matrix("v_proj", MatrixRole::V, model.d_model, kv_width, model.qkv_bias, w, w));
    out.push_back(matrix("o_proj", MatrixRole::O, q_width, model.d_model, model.o_bias, w, w));
  }
  if (!model.is_moe_layer(layer)) {
    append_ffn(model, out, "", model.ffn_dim, w, false, -1);
    return out;
  }
  const MoeSpec& moe = model.moe;
  out.push_back(matrix("router", MatrixRole::Router, model.d_model, moe.n_experts, moe.router_bias, w, w));
  for (uint32_t s = 0; s < moe.n_shared_experts; ++s)
    append_ffn(model, out, "shared_experts." + std::to_string(s) + ".", moe.expert_ffn_dim, model.moe_weight_dtype,
               true, -1);
  for (uint32_t e = 0; e < moe.n_experts; ++e)
    append_ffn(model, out, "experts." + std::to_string(e) + ".", moe.expert_ffn_dim, model.moe_weight_dtype, true,
               int32_t(e));
  return out;
}

uint64_t layer_vector_params(const ModelSpec& model, uint32_t /*layer*/) {
  // Before attention and before the MLP; one, which both read, with a parallel residual.
  uint64_t params = (model.parallel_residual ? 1 : 2) * norm_params(model, model.d_model);
  if (model.qk_norm) params += 2 * uint64_t(model.head_dim);  // one weight per head dimension, shared by heads
  if (model.attention_sinks) params += model.n_heads;
  if (model.is_mla()) params += uint64_t(model.mla.q_lora_rank) + model.mla.kv_lora_rank;  // the latents' RMSNorms
  return params;
}

uint64_t final_norm_params(const ModelSpec& model) { return norm_params(model, model.d_model); }

uint64_t kv_bytes_per_position(const ModelSpec& model) {
  return dtype_bytes(model.kv_dtype, uint64_t(model.cached_kv_heads()) * model.cached_entry_dim());
}

uint64_t kv_bytes_at_context(const ModelSpec& model, uint64_t context) {
  uint64_t bytes = 0;
  for (uint32_t layer = 0; layer < model.n_layers; ++layer)
    bytes += model.attended_positions(layer, context) * kv_bytes_per_position(model);
  return bytes;
}

ParamCounts count_params(const ModelSpec& model) {
  ParamCounts counts;
  const uint64_t table = uint64_t(model.vocab_size) * model.d_model;
  const uint64_t table_bytes = dtype_bytes(model.weight_dtype, table);

  // Embedding tables are looked up, not multiplied: they count in the total only.
  counts.total += table;
  counts.weight_bytes += table_bytes;
  if (model.positions == PositionKind::Learned) {
    const uint64_t positions = uint64_t(model.max_positions) * model.d_model;
    counts.total += positions;
    counts.weight_bytes += dtype_bytes(model.weight_dtype, positions);
  }

  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    const uint64_t vectors = layer_vector_params(model, layer);
    counts.total += vectors;
    counts.active += vectors;
    counts.weight_bytes += dtype_bytes(model.weight_dtype, vectors);
    for (const MatrixSpec& m : layer_matrices(model, layer)) {
      counts.total += m.params();
      counts.weight_bytes += m.bytes();
      // Routed experts are all the same size, so top_k of them are active per token.
      if (m.expert < 0)
        counts.active += m.params();
      else if (uint32_t(m.expert) < model.moe.top_k)
        counts.active += m.params();
    }
  }

  const uint64_t final_norm = final_norm_params(model);
  counts.total += final_norm;
  counts.active += final_norm;
  counts.weight_bytes += dtype_bytes(model.weight_dtype, final_norm);

  // The LM head multiplies every token; tied, it is the embedding table already counted in the total.
  // Its bias (one per token of the vocabulary) is its own, tied or not.
  counts.active += table;
  if (model.lm_head_bias) {
    counts.total += model.vocab_size;
    counts.active += model.vocab_size;
    counts.weight_bytes += dtype_bytes(model.weight_dtype, model.vocab_size);
  }
  if (!model.tied_embeddings) {
    counts.total += table;
    counts.weight_bytes += table_bytes;
  }
  return counts;
}

const char* active_params_convention() {
  return "active = weights multiplied per token (attention, router, shared and top-k routed experts, "
         "dense MLP, norms, LM head); the input embedding table is looked up, not multiplied, and is "
         "excluded, as model cards do";
}

}  // namespace wafersim::workloads
