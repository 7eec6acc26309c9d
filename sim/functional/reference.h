#pragma once
// The model's forward pass in Eigen, in double precision, with the weights of
// ModelWeights: what the mapping must compute, independent of any mapping.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/functional/numbers.h"

namespace wafersim::functional {

// Values one token produces, by name (docs/VALIDATION.md lists them):
// per layer "layer_in", "attn_norm", "qkv_raw", "qkv", "attn", "o", "h_mid",
// "mlp_norm" (the MLP's input: attn_norm again with a parallel residual),
// "gate_up", "act", "down", "layer_out" (an MoE layer has
// "router" logits and the combined expert output "moe" instead of gate_up,
// act and down); outside the layers
// "embed", "final_hidden", "logits".
using Values = std::map<std::string, std::vector<double>>;

struct ReferenceToken {
  std::vector<Values> layers;
  Values outer;
  uint32_t argmax = 0;
  uint32_t near_ties_followed = 0;  // MoE layers that took the given routing over their own top-k
};

class Reference {
 public:
  Reference(const ModelWeights& weights, uint32_t sequences);
  ~Reference();
  // Decodes `token` at `position` of `sequence` (positions in order from 0).
  // An MoE layer takes the experts `routed` names for it instead of its own
  // top-k when they are a near tie: each of them within `tie` (relative to
  // the largest |logit|) of the k-th largest logit. Rounding may flip such a
  // choice; a choice outside the tie is not followed.
  ReferenceToken step(uint32_t sequence, uint32_t token, uint64_t position,
                      const std::map<int32_t, std::vector<uint32_t>>& routed = {}, double tie = 0);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Layouts of the vectors named above, shared with the evaluator.
// qkv: the query heads, then the key heads, then the value heads, head h's
// element e at h * head_dim + e.
uint64_t qkv_size(const workloads::ModelSpec& model);
// gate_up: a gated MLP (SwiGLU, GeGLU) holds gate element e at 2e and up
// element e at 2e + 1; a plain MLP holds up element e at e.
uint64_t gate_up_size(const workloads::ModelSpec& model);
// SiLU(gate) x up (SwiGLU), GELU(gate) x up (GeGLU); plain: GELU(up), gate unused.
float activation(const workloads::ModelSpec& model, float gate, float up);
double silu(double x);
double gelu(double x);  // the tanh approximation (gelu_new, gelu_pytorch_tanh)
double gated_activation(const workloads::ModelSpec& model, double gate, double up);
// The routed experts a token picks (top_k largest router logits, the lower
// index first among equals) and their weights: softmax over the picked logits.
std::vector<std::pair<uint32_t, double>> pick_experts(const std::vector<double>& logits, uint32_t top_k);
// The same for a given choice of experts: softmax over their logits.
std::vector<std::pair<uint32_t, double>> weigh_experts(const std::vector<double>& logits,
                                                       const std::vector<uint32_t>& experts);

}  // namespace wafersim::functional
