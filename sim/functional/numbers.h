#pragma once
// Real numbers for the functional mode: the rounding of each number format and
// the model's parameters, drawn per parameter from a seed so that a weight's
// value depends on the model and the seed only, never on the mapping.
#include <cstdint>

#include "models/dtype.h"
#include "workloads/model_spec.h"

namespace wafersim::functional {

// `value` rounded to the nearest number of `dtype` (ties to even); FP32 is
// returned as is. Only FP32, FP16 and BF16 are emulated (supported_dtype).
float round_to(Dtype dtype, float value);
bool supported_dtype(Dtype dtype);
// Weights may also be MXFP4 (ModelWeights quantises each block of 32 along a row).
bool supported_weight_dtype(Dtype dtype);
// Unit roundoff of a format: half the gap between 1 and the next number.
double unit_roundoff(Dtype dtype);

// Which tensor of the model a parameter belongs to.
enum class Tensor : uint8_t {
  Embedding,  // vocab x d_model
  Positions,  // max_positions x d_model (learned positions)
  Q,
  K,
  V,
  O,  // rows = outputs (head * head_dim + e), columns = inputs
  Gate,
  Up,
  Down,
  LmHead,    // vocab x d_model (the embedding table when tied)
  AttnNorm,  // norm gains (and LayerNorm shifts: ModelWeights::norm)
  MlpNorm,
  FinalNorm,
  QNorm,
  KNorm,   // per-head RMSNorm gains over head_dim
  Router,  // n_experts x d_model
  // Of expert `expert`: the routed ones 0..n_experts-1, then the shared ones.
  ExpertGate,
  ExpertUp,
  ExpertDown,
  Sinks,  // one learned sink logit per query head (attention_sinks)
};

// The parameters of one model, drawn from a seed.
class ModelWeights {
 public:
  ModelWeights(const workloads::ModelSpec& model, uint64_t seed);
  const workloads::ModelSpec& model() const { return model_; }

  // Element (row, col) of a matrix, in the format it is stored in.
  float matrix(Tensor tensor, int32_t layer, uint64_t row, uint64_t col, int32_t expert = -1) const;
  // Bias element of a matrix's output `row` (0 when the model has no such bias).
  float bias(Tensor tensor, int32_t layer, uint64_t row, int32_t expert = -1) const;
  // Norm gain (shift = false) or LayerNorm shift of element `index`.
  float norm(Tensor tensor, int32_t layer, uint64_t index, bool shift = false) const;
  // The sink logit of query head `head` (0 when the model has no sinks).
  float sink(int32_t layer, uint32_t head) const;
  bool has_bias(Tensor tensor) const;
  uint64_t columns(Tensor tensor) const;  // d_in of a matrix

 private:
  float draw(Tensor tensor, int32_t layer, uint64_t row, uint64_t col, uint64_t salt, int32_t expert = -1) const;
  workloads::ModelSpec model_;
  uint64_t seed_;
};

// The prompt token of `sequence` at `position`, from the workload seed.
uint32_t prompt_token(uint64_t seed, uint32_t sequence, uint64_t position, uint32_t vocab);

// Rotary angle frequency base (the Llama value; the model files do not set it).
constexpr double kRopeTheta = 10000.0;
// Epsilon of every norm.
constexpr double kNormEpsilon = 1e-5;

}  // namespace wafersim::functional
