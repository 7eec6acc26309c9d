#include "workloads/lowering.h"

#include <initializer_list>

namespace wafersim::workloads {

namespace {

using Rows = std::vector<StepLowering>;

Rows joined(std::initializer_list<Rows> parts) {
  Rows out;
  for (const Rows& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Each QKV slice's q/k norm and rotary, or neither (qkv_slices: the fp32
// sums to activations). A head split across tiles first has its sums of
// squares all-reduced along the line (qk_norm_stats and its moves).
const Rows kQkvSlices = {
    {"qk_norm_stats", {}, "qk_norm"},       // each tile's sums of squares per head
    {"qk_norm_reduce", {}, "moves"},        // along the line to the root
    {"qk_norm_broadcast", {}, "moves"},     // and back along it
    {"rotary", {"qk_norm", "rotary"}, ""},  // q/k norm too, where the model has it
    {"qk_norm", {"qk_norm"}, ""},           // a model without rotary
    {"qkv_slices", {}, "qkv_slices"},       // neither
};

// The attention half of a layer whose vector passes through the root.
const Rows kRootAttention = joined({
    {{"input_norm", {"attn_norm"}, ""}, {"qkv_proj", {"q_proj", "k_proj", "v_proj"}, ""}},
    kQkvSlices,
    {{"gather_qkv", {}, "gathers"},
     {"attention", {"attention_scores", "softmax", "attention_values", "kv_append"}, ""},
     {"o_proj", {"o_proj"}, ""},
     {"gather_o", {}, "gathers"},
     {"residual_norm", {"attn_residual", "mlp_norm"}, "", ResidualForm::Sequential},
     // A parallel residual: the attention branch joins the stream, and the MLP
     // takes the input norm the root kept.
     {"attn_residual", {"attn_residual"}, "", ResidualForm::Parallel}},
});

const Rows kFeedForward = {
    {"gate_up_proj", {"gate_proj", "up_proj"}, ""},
    {"activation", {"act"}, ""},
    {"down_proj", {"down_proj"}, ""},
};

const Rows kEmbedding = {
    {"lookup", {"embedding"}, ""},
    {"position_add", {"position_embedding"}, ""},
    {"scatter", {}, "moves"},  // the first layer's, with the slices hand-off
};

const Rows kLayer =
    joined({kRootAttention, kFeedForward, {{"gather_down", {}, "gathers"}, {"residual", {"mlp_residual"}, ""}}});

// Multi-head latent attention (model.mla) in place of QKV: both latents from
// the root column to the root row, their RMSNorms there (statistics
// all-reduced along the row) and rotary of the rope key, the query's up
// projection back to the root column with rotary of its rope parts, and
// W_UK absorbed into each head's query on its way to the root row.
const Rows kLatentAttention = {
    {"latent_proj", {"q_a_proj", "kv_a_proj_with_mqa"}, ""},
    {"latent_norm_stats", {"latent_norm"}, ""},
    {"latent_norm_reduce", {}, "moves"},
    {"latent_norm_broadcast", {}, "moves"},
    {"latent_norm_scale", {}, "latent_norm"},
    {"rotary_key", {}, "rotary"},
    {"q_up_proj", {"q_b_proj"}, ""},
    {"rotary_query", {"rotary"}, ""},
    {"q_absorb", {"k_up_proj"}, ""},
};

// Norms on slices: each slice's statistics, their all-reduce along the root
// column, the scaling. Attention and the MLP norm of a layer on slices.
const Rows kDistributedAttention = joined({
    {{"scatter", {}, "moves"},
     {"input_norm_stats", {"attn_norm"}, ""},
     {"input_norm_reduce", {}, "moves"},
     {"input_norm_broadcast", {}, "moves"},
     {"input_norm_scale", {}, "attn_norm"},
     {"qkv_proj", {"q_proj", "k_proj", "v_proj"}, ""}},
    kQkvSlices,
    kLatentAttention,
    {// A prefill's grid under decode's groups: the slices re-cut around attention.
     {"qkv_to_grid", {}, "moves"},
     {"attention", {"attention_scores", "softmax", "attention_values", "kv_append"}, ""},
     {"attention_to_groups", {}, "moves"},
     // With latent attention each head's latent output passes W_UV on its way into W_O.
     {"o_proj", {"v_up_proj", "o_proj"}, ""},
     {"residual_norm_stats", {"mlp_norm", "attn_residual"}, "", ResidualForm::Sequential},
     {"mlp_norm_reduce", {}, "moves", ResidualForm::Sequential},
     {"mlp_norm_broadcast", {}, "moves", ResidualForm::Sequential},
     {"mlp_norm_scale", {}, "mlp_norm", ResidualForm::Sequential},
     // A parallel residual: the attention branch joins the stream's slices,
     // and the MLP takes the input norm's slices the tiles kept.
     {"attn_residual_slices", {"attn_residual"}, "", ResidualForm::Parallel}},
});

// The residual adds on slices; gathered to the root unless handed on as slices.
const Rows kSliceResidual = {{"residual_slices", {"mlp_residual"}, ""}, {"gather_residual", {}, "gathers"}};

const Rows kDistributedLayer = joined({kDistributedAttention, kFeedForward, kSliceResidual});

// The router's logits on the root column, gathered, top-k at the root; the
// dispatch sums the experts' results (mapping.moe_combine: root) or takes the
// combining tree's sum.
const Rows kMoeRouting = {
    {"router", {"router"}, ""},
    {"gather_logits", {}, "gathers"},
    {"top_k", {"top_k"}, ""},
    {"experts", {"expert_combine"}, ""},
};

const Rows kMoeLayer = joined({kRootAttention, kMoeRouting, {{"residual", {"mlp_residual"}, ""}}});

// An MoE layer on slices: the normed slices meet at the root, which routes and
// dispatches them; the experts' sum returns to the slices for the residual.
const Rows kDistributedMoeLayer = joined({
    kDistributedAttention,
    {{"gather_mlp_input", {}, "gathers"}},
    kMoeRouting,
    {{"scatter_moe_output", {}, "moves"}},
    kSliceResidual,
});

// A routed expert scales its result by its router weight: at its own root
// after the gather (mapping.dataflow: root), or on the root row's slices
// before it (distributed).
const Rows kExpert = joined({kFeedForward, {{"gather_down", {}, "gathers"}, {"expert_scale", {}, "expert_combine"}}});

// The argmax over each root-column slice, reduced to the root; the root's
// pick between the candidates the reduce left it is a fixed few FLOPs that
// the graph folds into sampling's one compare per logit.
const Rows kHead = {
    {"gather_input", {}, "gathers"},  // the last layer's, with the slices hand-off
    {"final_norm", {"final_norm"}, ""},
    {"lm_head_proj", {"lm_head"}, ""},
    {"argmax_slice", {"sample"}, ""},
    {"argmax", {}, "gathers"},
    {"sample", {}, "pick"},
};

}  // namespace

const char* to_string(LayerLowering kind) {
  switch (kind) {
    case LayerLowering::Embedding: return "embedding";
    case LayerLowering::Layer: return "layer";
    case LayerLowering::DistributedLayer: return "distributed layer";
    case LayerLowering::MoeLayer: return "MoE layer";
    case LayerLowering::DistributedMoeLayer: return "distributed MoE layer";
    case LayerLowering::Expert: return "expert";
    case LayerLowering::Head: return "head";
  }
  return "?";
}

const std::vector<StepLowering>& lowering_table(LayerLowering kind) {
  switch (kind) {
    case LayerLowering::Embedding: return kEmbedding;
    case LayerLowering::Layer: return kLayer;
    case LayerLowering::DistributedLayer: return kDistributedLayer;
    case LayerLowering::MoeLayer: return kMoeLayer;
    case LayerLowering::DistributedMoeLayer: return kDistributedMoeLayer;
    case LayerLowering::Expert: return kExpert;
    case LayerLowering::Head: return kHead;
  }
  return kLayer;
}

const StepLowering* find_lowering(LayerLowering kind, const std::string& step) {
  for (const StepLowering& row : lowering_table(kind))
    if (row.step == step) return &row;
  return nullptr;
}

std::vector<std::string> steps_of_op(LayerLowering kind, const std::string& op, bool parallel_residual) {
  std::vector<std::string> steps;
  for (const StepLowering& row : lowering_table(kind)) {
    if (row.residual == (parallel_residual ? ResidualForm::Sequential : ResidualForm::Parallel)) continue;
    bool does = row.group == op;  // a step that does part of the op
    for (const std::string& name : row.ops) does = does || name == op;
    if (does) steps.push_back(row.step);
  }
  return steps;
}

}  // namespace wafersim::workloads
