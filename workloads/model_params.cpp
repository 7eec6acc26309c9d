// The model.* section: its parameter table and the cross-field checks of a model file.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "models/config/param_table.h"
#include "workloads/model_spec.h"

namespace wafersim::workloads {

namespace {

constexpr double kMaxWidth = 1 << 24;
constexpr double kMaxLayers = 4096;
// ExpertRouter keeps its partial shuffle on the stack; real models route to at most 16.
constexpr double kMaxTopK = 64;

// Named again by the cross-field checks.
constexpr const char* kNLayers = "model.n_layers";
constexpr const char* kMoePrefix = "model.moe.";
constexpr const char* kNExperts = "model.moe.n_experts";
constexpr const char* kTopK = "model.moe.top_k";
constexpr const char* kExpertFfnDim = "model.moe.expert_ffn_dim";
constexpr const char* kMoeLayers = "model.moe.layers";
constexpr const char* kRotaryDim = "model.rotary_dim";
constexpr const char* kMlaPrefix = "model.mla.";
constexpr const char* kKvLoraRank = "model.mla.kv_lora_rank";
constexpr const char* kQLoraRank = "model.mla.q_lora_rank";
constexpr const char* kRopeHeadDim = "model.mla.qk_rope_head_dim";
constexpr const char* kVHeadDim = "model.mla.v_head_dim";

std::vector<config::Choice<Dtype>> dtype_choices() {
  std::vector<config::Choice<Dtype>> choices;
  for (const char* const* name = dtype_names(); *name; ++name) {
    Dtype dtype{};
    parse_dtype(*name, &dtype);
    choices.push_back({*name, dtype});
  }
  return choices;
}

// The MoE layers, checked against model.n_layers (read before) as they are
// copied: an index past it may not fit the member.
void read_moe_layers(const config::Config& config, const std::string& path, ModelSpec& model) {
  for (int64_t layer : config.get_int_list(path)) {
    if (layer >= int64_t(model.n_layers))
      config.fail_given({path, kNLayers}, path + " names layer " + std::to_string(layer) + " but the model has " +
                                              std::to_string(model.n_layers) + " layers (model.n_layers; 0.." +
                                              std::to_string(model.n_layers - 1) + ")");
    model.moe.layers.push_back(uint32_t(layer));
  }
}

using config::bool_param;
using config::int_param;

config::ParamTable<MoeSpec> moe_table() {
  return config::ParamTable<MoeSpec>()
      .add(int_param(kNExperts, "experts", "0", 0, 65536, "Routed experts per MoE layer; 0 = dense"),
           &MoeSpec::n_experts)
      .add(int_param(kTopK, "experts", "0", 0, kMaxTopK, "Routed experts each token uses"), &MoeSpec::top_k)
      .add(int_param("model.moe.n_shared_experts", "experts", "0", 0, 64,
                     "Experts every token uses, besides the routed ones"),
           &MoeSpec::n_shared_experts)
      .add(int_param(kExpertFfnDim, "elements", "0", 0, kMaxWidth, "Hidden width of one expert (routed and shared)"),
           &MoeSpec::expert_ffn_dim);
}

config::ParamTable<MlaSpec> mla_table() {
  return config::ParamTable<MlaSpec>()
      .add(int_param(kQLoraRank, "elements", "0", 0, kMaxWidth,
                     "Multi-head latent attention: width of the query latent (q_lora_rank)"),
           &MlaSpec::q_lora_rank)
      .add(int_param(kKvLoraRank, "elements", "0", 0, kMaxWidth,
                     "Multi-head latent attention: width of the cached KV latent (kv_lora_rank); 0 = no latent "
                     "attention"),
           &MlaSpec::kv_lora_rank)
      .add(int_param(kRopeHeadDim, "elements", "0", 0, 65536,
                     "Multi-head latent attention: rotary width of each query head and of the one shared rope key"),
           &MlaSpec::qk_rope_head_dim)
      .add(int_param(kVHeadDim, "elements", "0", 0, 65536, "Multi-head latent attention: width of each value head"),
           &MlaSpec::v_head_dim);
}

const config::ParamTable<ModelSpec>& model_table() {
  static const config::ParamTable<ModelSpec> table =
      config::ParamTable<ModelSpec>()
          .add(config::string_param("model.name", "\"\"", "Model name used in reports; empty = the preset name"),
               &ModelSpec::name)
          .add(int_param("model.d_model", "elements", std::nullopt, 1, kMaxWidth, "Width of the residual stream"),
               &ModelSpec::d_model)
          .add(int_param(kNLayers, "layers", std::nullopt, 1, kMaxLayers, "Transformer layers"), &ModelSpec::n_layers)
          .add(int_param("model.n_heads", "heads", std::nullopt, 1, 4096, "Query heads per layer"), &ModelSpec::n_heads)
          .add(int_param("model.n_kv_heads", "heads", std::nullopt, 1, 4096,
                         "Key/value heads per layer (= n_heads: multi-head; 1: multi-query; else grouped-query)"),
               &ModelSpec::n_kv_heads)
          .add(int_param("model.head_dim", "elements", std::nullopt, 1, 65536, "Width of one attention head"),
               &ModelSpec::head_dim)
          .add(int_param("model.ffn_dim", "elements", "0", 0, kMaxWidth,
                         "Hidden width of the dense MLP; 0 when every layer is MoE"),
               &ModelSpec::ffn_dim)
          .add(int_param("model.vocab_size", "tokens", std::nullopt, 1, kMaxWidth, "Vocabulary size"),
               &ModelSpec::vocab_size)
          .add(int_param("model.max_positions", "tokens", std::nullopt, 1, 1 << 26,
                         "Longest context the model supports (rows of the table with learned positions)"),
               &ModelSpec::max_positions)
          .add_enum<NormKind>("model.norm", {{"rmsnorm", NormKind::RMSNorm}, {"layernorm", NormKind::LayerNorm}},
                              "rmsnorm", "Normalisation (LayerNorm adds a bias)", &ModelSpec::norm)
          .add_enum<PositionKind>(
              "model.positions", {{"rotary", PositionKind::Rotary}, {"learned", PositionKind::Learned}}, "rotary",
              "Rotary position embedding, or a learned table added to the input", &ModelSpec::positions)
          .add(int_param(kRotaryDim, "elements", "0", 0, 65536,
                         "Elements of each query and key head that rotary turns; 0 = the whole head"),
               &ModelSpec::rotary_dim)
          .add_enum<MlpKind>("model.mlp",
                             {{"swiglu", MlpKind::SwiGLU}, {"geglu", MlpKind::GeGLU}, {"plain", MlpKind::Plain}},
                             "swiglu",
                             "Gated MLP (gate, up, down) with SiLU (swiglu) or GELU (geglu) on the gate, or plain MLP "
                             "(up, GELU, down)",
                             &ModelSpec::mlp)
          .add(bool_param("model.parallel_residual", false,
                          "Attention and the MLP both read the layer's one input norm, and both join the residual "
                          "stream (GPT-J, Phi-2)"),
               &ModelSpec::parallel_residual)
          .add(bool_param("model.tied_embeddings", false, "LM head shares the input embedding table"),
               &ModelSpec::tied_embeddings)
          .add(bool_param("model.lm_head_bias", false, "Bias on the LM head (one per vocabulary entry)"),
               &ModelSpec::lm_head_bias)
          .add(bool_param("model.qkv_bias", false, "Bias on the Q, K and V projections"), &ModelSpec::qkv_bias)
          .add(bool_param("model.o_bias", false, "Bias on the attention output projection"), &ModelSpec::o_bias)
          .add(bool_param("model.mlp_bias", false, "Bias on the MLP and expert projections"), &ModelSpec::mlp_bias)
          .add(bool_param("model.qk_norm", false, "RMSNorm on each query and key head before rotary"),
               &ModelSpec::qk_norm)
          .add(bool_param("model.attention_sinks", false, "One learned sink logit per head joins the softmax"),
               &ModelSpec::attention_sinks)
          .add(int_param("model.sliding_window", "tokens", "0", 0, 1 << 26,
                         "Positions a windowed layer attends to; 0 = no window"),
               &ModelSpec::sliding_window)
          .add(int_param("model.sliding_window_every", "layers", "0", 0, kMaxLayers,
                         "Layers with index % every == 0 use the window; 0 = every layer does"),
               &ModelSpec::sliding_window_every)
          .add_enum<Dtype>("model.weight_dtype", dtype_choices(), "bf16",
                           "Weights other than experts, biases and norms", &ModelSpec::weight_dtype)
          .add_enum<Dtype>("model.moe_weight_dtype", dtype_choices(), "bf16", "Expert weights (routed and shared)",
                           &ModelSpec::moe_weight_dtype)
          .add_enum<Dtype>("model.kv_dtype", dtype_choices(), "bf16", "KV cache", &ModelSpec::kv_dtype)
          .add_enum<Dtype>("model.activation_dtype", dtype_choices(), "bf16", "Activations passed between operations",
                           &ModelSpec::activation_dtype)
          .add_table(moe_table(), &ModelSpec::moe)
          .add_table(mla_table(), &ModelSpec::mla)
          .add_converted(
              config::as_type(config::ParamType::IntList,
                              int_param(kMoeLayers, "layer index", "[]", 0, std::numeric_limits<double>::infinity(),
                                        "Indices of the MoE layers; empty = every layer")),
              read_moe_layers)
          .add(bool_param("model.moe.router_bias", false, "Bias on the router projection"),
               [](ModelSpec& model) -> bool& { return model.moe.router_bias; });
  return table;
}

void check_moe(const config::Config& config, ModelSpec& model) {
  MoeSpec& moe = model.moe;
  if (moe.n_experts == 0) {
    // A dense model with MoE settings is most likely a typo in n_experts.
    for (const config::ParamSpec& param : config.schema().params())
      if (param.path.rfind(kMoePrefix, 0) == 0 && param.path != kNExperts && !config.is_default(param.path))
        config.fail_given({param.path, kNExperts}, param.path + " is set but model.moe.n_experts is 0 (a dense model)");
    return;
  }
  const std::vector<std::string> routing = {kTopK, kNExperts};
  if (moe.top_k == 0)
    config.fail_given(routing, "model.moe.top_k must be at least 1 when model.moe.n_experts > 0 (it is " +
                                   std::to_string(moe.n_experts) + ")");
  if (moe.top_k > moe.n_experts)
    config.fail_given(routing, "model.moe.top_k is " + std::to_string(moe.top_k) + " but there are only " +
                                   std::to_string(moe.n_experts) + " experts (model.moe.n_experts)");
  if (moe.expert_ffn_dim == 0)
    config.fail_given({kExpertFfnDim, kNExperts},
                      "model.moe.expert_ffn_dim must be at least 1 when model.moe.n_experts > 0");

  std::sort(moe.layers.begin(), moe.layers.end());
  if (std::adjacent_find(moe.layers.begin(), moe.layers.end()) != moe.layers.end())
    config.fail(kMoeLayers, "lists a layer twice");
  if (moe.layers.empty())
    for (uint32_t layer = 0; layer < model.n_layers; ++layer) moe.layers.push_back(layer);
}

// Latent attention replaces the Q/K/V projections and the per-head cache;
// what the spec's other attention settings describe has no place in it.
void check_mla(const config::Config& config, const ModelSpec& model) {
  if (!model.is_mla()) {
    for (const config::ParamSpec& param : config.schema().params())
      if (param.path.rfind(kMlaPrefix, 0) == 0 && !config.is_default(param.path))
        config.fail_given({param.path, kKvLoraRank},
                          param.path + " is set but model.mla.kv_lora_rank is 0 (no latent attention)");
    return;
  }
  const std::pair<const char*, uint32_t> widths[] = {{kQLoraRank, model.mla.q_lora_rank},
                                                     {kRopeHeadDim, model.mla.qk_rope_head_dim},
                                                     {kVHeadDim, model.mla.v_head_dim}};
  for (const auto& [path, width] : widths)
    if (width == 0)
      config.fail_given({path, kKvLoraRank}, std::string(path) + " must be at least 1 with latent attention");
  if (model.mla.qk_rope_head_dim % 2 != 0) config.fail(kRopeHeadDim, "must be even: rotary turns pairs of elements");
  if (model.n_kv_heads != model.n_heads)
    config.fail_given({"model.n_kv_heads", kKvLoraRank},
                      "model.n_kv_heads must equal model.n_heads with latent attention (each head decompresses its "
                      "own key and value from the one cached latent)");
  if (model.positions != PositionKind::Rotary)
    config.fail_given({"model.positions", kKvLoraRank}, "latent attention needs rotary positions (its rope key)");
  const std::pair<const char*, bool> unsupported[] = {{"model.qk_norm", model.qk_norm},
                                                      {"model.attention_sinks", model.attention_sinks},
                                                      {"model.qkv_bias", model.qkv_bias},
                                                      {"model.sliding_window", model.sliding_window != 0},
                                                      {"model.rotary_dim", model.rotary_dim != 0},
                                                      {"model.parallel_residual", model.parallel_residual}};
  for (const auto& [path, set] : unsupported)
    if (set)
      config.fail_given({path, kKvLoraRank},
                        std::string(path) + " cannot be combined with latent attention (model.mla)");
}

void check_shape(const config::Config& config, const ModelSpec& model) {
  const std::vector<std::string> heads = {"model.n_kv_heads", "model.n_heads"};
  if (model.n_kv_heads > model.n_heads)
    config.fail_given(heads, "model.n_kv_heads is " + std::to_string(model.n_kv_heads) + ", more than model.n_heads (" +
                                 std::to_string(model.n_heads) + ")");
  if (model.n_heads % model.n_kv_heads != 0)
    config.fail_given(heads, "model.n_kv_heads (" + std::to_string(model.n_kv_heads) + ") must divide model.n_heads (" +
                                 std::to_string(model.n_heads) +
                                 "): each key/value head serves a whole group of query heads");

  bool has_dense_layer = false;
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) has_dense_layer |= !model.is_moe_layer(layer);
  const std::vector<std::string> dense = {"model.ffn_dim", "model.moe.n_experts", "model.moe.layers"};
  if (has_dense_layer && model.ffn_dim == 0)
    config.fail_given(dense, "model.ffn_dim must be at least 1: the model has dense (non-MoE) layers");
  if (!has_dense_layer && model.ffn_dim != 0)
    config.fail_given(dense,
                      "model.ffn_dim is unused because every layer is MoE; set it to 0 or list model.moe.layers");

  if (model.rotary_dim != 0) {
    const std::vector<std::string> rotary = {kRotaryDim, "model.head_dim"};
    if (model.positions != PositionKind::Rotary)
      config.fail_given({kRotaryDim, "model.positions"}, "model.rotary_dim is set but model.positions is not rotary");
    if (model.rotary_dim > model.head_dim)
      config.fail_given(rotary, "model.rotary_dim (" + std::to_string(model.rotary_dim) +
                                    ") is more than model.head_dim (" + std::to_string(model.head_dim) + ")");
    if (model.rotary_dim % 2 != 0)
      config.fail_given(rotary, "model.rotary_dim (" + std::to_string(model.rotary_dim) +
                                    ") must be even: rotary turns pairs of elements");
  }

  if (model.sliding_window_every != 0 && model.sliding_window == 0)
    config.fail_given({"model.sliding_window_every", "model.sliding_window"},
                      "model.sliding_window_every needs model.sliding_window > 0");
  if (model.sliding_window > model.max_positions)
    config.fail_given({"model.sliding_window", "model.max_positions"},
                      "model.sliding_window (" + std::to_string(model.sliding_window) +
                          ") is longer than model.max_positions (" + std::to_string(model.max_positions) + ")");
}

}  // namespace

void declare_model_params(config::Schema& schema) { model_table().declare(schema); }

ModelSpec model_from_config(const config::Config& config, const std::string& unnamed) {
  ModelSpec model = model_table().read(config);
  if (model.name.empty()) model.name = config.preset("model");
  if (model.name.empty()) model.name = unnamed;
  check_moe(config, model);
  check_shape(config, model);
  check_mla(config, model);
  return model;
}

}  // namespace wafersim::workloads
