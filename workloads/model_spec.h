#pragma once
// A decoder-only transformer, as read from a model file (workloads/models/*.yaml).
#include <cstdint>
#include <string>
#include <vector>

#include "models/dtype.h"

namespace wafersim {
namespace config {
class Config;
class Schema;
}  // namespace config

namespace workloads {

enum class NormKind : uint8_t { RMSNorm, LayerNorm };
enum class PositionKind : uint8_t { Rotary, Learned };
// swiglu = gate, up, SiLU(gate) x up, down; geglu = the same with GELU (tanh
// approximation) on the gate; plain = up, GELU, down.
enum class MlpKind : uint8_t { SwiGLU, Plain, GeGLU };
// Whether the MLP has a gate projection (SwiGLU, GeGLU).
inline bool gated(MlpKind kind) { return kind != MlpKind::Plain; }

struct MoeSpec {
  uint32_t n_experts = 0;  // 0 = dense model
  uint32_t top_k = 0;
  uint32_t n_shared_experts = 0;
  uint32_t expert_ffn_dim = 0;
  std::vector<uint32_t> layers;  // MoE layer indices (all layers when the file lists none)
  bool router_bias = false;
};

// Multi-head latent attention (DeepSeek-V2/V3): queries pass through a
// low-rank latent, and each position caches only its compressed latent c_KV
// (kv_lora_rank) and one rope key shared by all heads (qk_rope_head_dim).
// head_dim is then each head's non-rotary query and key width (qk_nope_head_dim).
// Decode runs it absorbed: W_UK folds into each head's query, W_UV applies to
// each head's latent output, so attention is one latent KV head of key width
// kv_lora_rank + qk_rope_head_dim and value width kv_lora_rank.
struct MlaSpec {
  uint32_t q_lora_rank = 0;
  uint32_t kv_lora_rank = 0;  // 0 = the model has no latent attention
  uint32_t qk_rope_head_dim = 0;
  uint32_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  uint32_t d_model = 0;
  uint32_t n_layers = 0;
  uint32_t n_heads = 0;
  uint32_t n_kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t ffn_dim = 0;  // dense MLP width (0 for MoE-only models)
  uint32_t vocab_size = 0;
  uint32_t max_positions = 0;
  NormKind norm = NormKind::RMSNorm;
  PositionKind positions = PositionKind::Rotary;
  uint32_t rotary_dim = 0;  // elements of each query and key head rotary turns; 0 = all of head_dim
  MlpKind mlp = MlpKind::SwiGLU;
  // The MLP reads the layer's input norm, as attention does, and both branches
  // join the residual stream (GPT-J, Phi-2): one norm per layer.
  bool parallel_residual = false;
  bool tied_embeddings = false;
  bool lm_head_bias = false;
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;               // per-head RMSNorm on Q and K
  bool attention_sinks = false;       // one learned sink logit per head
  uint32_t sliding_window = 0;        // tokens; 0 = every layer attends to the full context
  uint32_t sliding_window_every = 0;  // when > 0: layers with index % every == 0 use the window
  Dtype weight_dtype = Dtype::BF16;
  Dtype moe_weight_dtype = Dtype::BF16;
  Dtype kv_dtype = Dtype::BF16;
  Dtype activation_dtype = Dtype::BF16;
  MoeSpec moe;
  MlaSpec mla;

  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // The heads the KV cache holds: the one latent head with MLA, else n_kv_heads.
  uint32_t cached_kv_heads() const { return is_mla() ? 1 : n_kv_heads; }
  // Widths of one query head's key (what a score multiplies) and of its value, as attention reads them.
  uint32_t attention_key_dim() const { return is_mla() ? mla.kv_lora_rank + mla.qk_rope_head_dim : head_dim; }
  uint32_t attention_value_dim() const { return is_mla() ? mla.kv_lora_rank : head_dim; }
  // Elements one position of one cached KV head holds: key and value, or with MLA the latent and the rope key.
  uint32_t cached_entry_dim() const { return is_mla() ? attention_key_dim() : 2 * head_dim; }
  bool is_moe_layer(uint32_t layer) const;
  // Elements of each query and key head that rotary turns (0 without rotary positions).
  uint32_t rotated_dims() const;
  bool has_sliding_window(uint32_t layer) const;
  // Positions a layer attends to at a given context (the window, when it has one).
  uint64_t attended_positions(uint32_t layer, uint64_t context) const;
};

// What one weight matrix of a layer is for.
// MLA: QDown (W_DQ), KvDown (W_DKV with the rope key's W_KR), QUp (W_UQ with W_QR), KUp (W_UK), VUp (W_UV).
enum class MatrixRole : uint8_t {
  Q,
  K,
  V,
  O,
  Gate,
  Up,
  Down,
  Router,
  ExpertGate,
  ExpertUp,
  ExpertDown,
  QDown,
  KvDown,
  QUp,
  KUp,
  VUp
};

struct MatrixSpec {
  std::string name;  // "q_proj", "experts.17.down_proj"
  MatrixRole role;
  uint64_t d_in = 0, d_out = 0;
  bool bias = false;
  Dtype dtype = Dtype::BF16;
  Dtype bias_dtype = Dtype::BF16;  // biases stay in the model's weight dtype (never block-scaled)
  int32_t expert = -1;             // routed expert index; -1 for dense, attention and shared weights
  uint64_t bytes() const;          // weights (+ bias) in dtype, scale blocks included
  uint64_t params() const;
};

// Weight matrices of transformer layer `layer`, in execution order.
std::vector<MatrixSpec> layer_matrices(const ModelSpec& model, uint32_t layer);
// Parameters of a layer that are not matrices (norm weights, q/k norm weights,
// sinks); stored in weight_dtype.
uint64_t layer_vector_params(const ModelSpec& model, uint32_t layer);
// Parameters of the norm after the last layer.
uint64_t final_norm_params(const ModelSpec& model);
// KV-cache bytes one position adds to one layer: 2 * n_kv_heads * head_dim * kv bytes, or with MLA
// (kv_lora_rank + qk_rope_head_dim) * kv bytes.
uint64_t kv_bytes_per_position(const ModelSpec& model);
// KV-cache bytes held by all layers at `context` positions (windowed layers keep the window only).
uint64_t kv_bytes_at_context(const ModelSpec& model, uint64_t context);

struct ParamCounts {
  uint64_t total = 0;
  // Active: the weights one token is multiplied by (attention, router, shared and
  // top_k routed experts, dense MLP, norms, LM head). The input embedding table
  // (and a learned position table) is only looked up, so it is excluded, as model
  // cards do; with tied embeddings the table counts once, as the LM head.
  uint64_t active = 0;
  uint64_t weight_bytes = 0;  // all weights in their dtypes
};
ParamCounts count_params(const ModelSpec& model);
// One sentence stating the convention above, for reports.
const char* active_params_convention();

void declare_model_params(config::Schema& schema);  // model.*
// Cross-field checks throw ConfigError. A model that neither model.name nor a
// preset names is called `unnamed`.
ModelSpec model_from_config(const config::Config& config, const std::string& unnamed = "custom");

}  // namespace workloads
}  // namespace wafersim
