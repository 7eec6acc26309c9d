#pragma once
// What the operations of a layer cost: the one table that both the decode and
// prefill graphs (graph.cpp, hence `describe model`) and the compiler
// (mapping/regions.cpp) read, so the two cannot disagree. Knows no hardware.
#include <cstdint>

#include "workloads/model_spec.h"

namespace wafersim::workloads {

// FLOPs per element of the non-matrix operations, and of one multiply-add.
struct ElementwiseFlops {
  static constexpr uint64_t kMultiplyAdd = 2;  // matrices, q.k and p.v: per weight / per head element
  static constexpr uint64_t kRmsNorm = 4;      // square, sum, scale, weight
  static constexpr uint64_t kLayerNorm = 7;    // mean, subtract, square, sum, scale, weight, bias
  static constexpr uint64_t kRotary = 3;       // x * cos + rotate(x) * sin, on queries and keys
  static constexpr uint64_t kSoftmax = 5;      // max, subtract, exp, sum, divide
  static constexpr uint64_t kSwiGlu = 5;       // silu (4) and the gate product
  static constexpr uint64_t kGelu = 8;         // tanh approximation
  static constexpr uint64_t kGeGlu = 9;        // gelu (8) of the gate and the gate product
  static constexpr uint64_t kAdd = 1;          // residual add, position embedding, expert sum
  static constexpr uint64_t kScale = 1;        // a routed expert's output times its router weight
  static constexpr uint64_t kArgmax = 1;       // one compare per logit
  // The scaling pass of a norm held as slices (scale, weight; LayerNorm: and bias);
  // the rest of the norm's FLOPs are its statistics pass.
  static constexpr uint64_t kRmsNormScaling = 2;
  static constexpr uint64_t kLayerNormScaling = 3;
};
static_assert(ElementwiseFlops::kRmsNormScaling < ElementwiseFlops::kRmsNorm &&
                  ElementwiseFlops::kLayerNormScaling < ElementwiseFlops::kLayerNorm,
              "a norm's statistics pass has FLOPs of its own");

// A token id (embedding input, sampled output, expert index), as the decode graph and the compiler move it.
constexpr uint64_t kTokenIdBytes = 4;

// Norm over d_model: FLOPs per element and the d_model vectors it reads
// (RMSNorm: weight; LayerNorm: weight and bias).
uint64_t norm_flops_per_element(NormKind kind);
uint32_t norm_vectors(NormKind kind);
// The same norm over slices of d_model held by several tiles runs in two
// passes with an all-reduce of its fp32 statistics between them: a statistics
// pass (RMSNorm: square, sum; LayerNorm: mean, subtract, square, sum) and a
// scaling pass (RMSNorm: scale, weight; LayerNorm: scale, weight, bias). The
// two add up to norm_flops_per_element.
uint64_t norm_statistics_flops_per_element(NormKind kind);
uint64_t norm_scaling_flops_per_element(NormKind kind);
uint32_t norm_statistics(NormKind kind);  // scalars reduced: RMSNorm the sum of squares; LayerNorm also the sum

// MLP activation: FLOPs per element of the intermediate vector, and the vectors
// of that width it reads (SwiGLU, GeGLU: gate and up; plain: up alone).
uint64_t activation_flops_per_element(MlpKind kind);
uint32_t activation_inputs(MlpKind kind);

// Per query and key element: the q/k norm (if the model has one). Values get none.
uint64_t qk_norm_flops_per_element(const ModelSpec& model);
// Query and key elements one token's rotary turns (kRotary FLOPs each):
// rotated_dims of every query and key head (with latent attention the rope
// part of every query head and the shared rope key); 0 without rotary positions.
uint64_t rotated_elements(const ModelSpec& model);

// Attention per query head and attended position: q.k, softmax and p.v, over
// the widths attention reads (with latent attention, absorbed: the latent and
// rope key, and the latent as value).
uint64_t score_flops(const ModelSpec& model);  // q.k: one multiply-add per head element
uint64_t value_flops(const ModelSpec& model);  // p.v: the same
uint64_t attention_flops_per_score(const ModelSpec& model);

// Router top-k per token: a scan over the logits and a softmax over the k chosen.
uint64_t top_k_flops(const ModelSpec& model);

// y = W x (+ b) per row.
uint64_t matmul_flops(uint64_t d_in, uint64_t d_out, bool bias);

// Whole cost of an element-wise op over `rows` vectors of d_model: FLOPs,
// weights (norm vectors, position rows) and activations read and written.
struct OpCost {
  uint64_t flops = 0;
  uint64_t weight_bytes = 0;
  uint64_t activation_bytes_in = 0;
  uint64_t activation_bytes_out = 0;
};
OpCost norm_cost(const ModelSpec& model, uint64_t rows);
OpCost residual_cost(const ModelSpec& model, uint64_t rows);
OpCost position_add_cost(const ModelSpec& model, uint64_t rows);

}  // namespace wafersim::workloads
