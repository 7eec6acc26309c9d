#include "workloads/op_costs.h"

namespace wafersim::workloads {

uint64_t norm_flops_per_element(NormKind kind) {
  return kind == NormKind::LayerNorm ? ElementwiseFlops::kLayerNorm : ElementwiseFlops::kRmsNorm;
}
uint32_t norm_vectors(NormKind kind) { return kind == NormKind::LayerNorm ? 2 : 1; }
uint64_t norm_scaling_flops_per_element(NormKind kind) {
  return kind == NormKind::LayerNorm ? ElementwiseFlops::kLayerNormScaling : ElementwiseFlops::kRmsNormScaling;
}
uint64_t norm_statistics_flops_per_element(NormKind kind) {
  return norm_flops_per_element(kind) - norm_scaling_flops_per_element(kind);
}
uint32_t norm_statistics(NormKind kind) { return kind == NormKind::LayerNorm ? 2 : 1; }

uint64_t activation_flops_per_element(MlpKind kind) {
  switch (kind) {
    case MlpKind::SwiGLU: return ElementwiseFlops::kSwiGlu;
    case MlpKind::GeGLU: return ElementwiseFlops::kGeGlu;
    case MlpKind::Plain: break;
  }
  return ElementwiseFlops::kGelu;
}
uint32_t activation_inputs(MlpKind kind) { return gated(kind) ? 2 : 1; }

uint64_t qk_norm_flops_per_element(const ModelSpec& model) { return model.qk_norm ? ElementwiseFlops::kRmsNorm : 0; }
uint64_t rotated_elements(const ModelSpec& model) {
  // Latent attention turns each query head's rope part and the one shared rope key.
  if (model.is_mla()) return (uint64_t(model.n_heads) + 1) * model.mla.qk_rope_head_dim;
  return uint64_t(model.n_heads + model.n_kv_heads) * model.rotated_dims();
}

uint64_t score_flops(const ModelSpec& model) { return ElementwiseFlops::kMultiplyAdd * model.attention_key_dim(); }
uint64_t value_flops(const ModelSpec& model) { return ElementwiseFlops::kMultiplyAdd * model.attention_value_dim(); }
uint64_t attention_flops_per_score(const ModelSpec& model) {
  return score_flops(model) + ElementwiseFlops::kSoftmax + value_flops(model);
}

uint64_t top_k_flops(const ModelSpec& model) {
  return model.moe.n_experts + ElementwiseFlops::kSoftmax * model.moe.top_k;
}

uint64_t matmul_flops(uint64_t d_in, uint64_t d_out, bool bias) {
  return ElementwiseFlops::kMultiplyAdd * d_in * d_out + (bias ? d_out : 0);
}

OpCost norm_cost(const ModelSpec& model, uint64_t rows) {
  const uint64_t d = model.d_model;
  OpCost cost;
  cost.flops = rows * d * norm_flops_per_element(model.norm);
  cost.weight_bytes = dtype_bytes(model.weight_dtype, norm_vectors(model.norm) * d);
  cost.activation_bytes_in = dtype_bytes(model.activation_dtype, rows * d);
  cost.activation_bytes_out = cost.activation_bytes_in;
  return cost;
}

OpCost residual_cost(const ModelSpec& model, uint64_t rows) {
  const uint64_t elements = rows * model.d_model;
  OpCost cost;
  cost.flops = elements * ElementwiseFlops::kAdd;
  cost.activation_bytes_in = dtype_bytes(model.activation_dtype, 2 * elements);  // stream and branch
  cost.activation_bytes_out = dtype_bytes(model.activation_dtype, elements);
  return cost;
}

OpCost position_add_cost(const ModelSpec& model, uint64_t rows) {
  const uint64_t elements = rows * model.d_model;
  OpCost cost;
  cost.flops = elements * ElementwiseFlops::kAdd;
  cost.weight_bytes = dtype_bytes(model.weight_dtype, elements);  // the rows of the position table
  cost.activation_bytes_in = dtype_bytes(model.activation_dtype, elements);
  cost.activation_bytes_out = cost.activation_bytes_in;
  return cost;
}

}  // namespace wafersim::workloads
