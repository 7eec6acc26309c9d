// The model.* section: declarations and the cross-field checks of a model file.
#include <algorithm>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "workloads/model_spec.h"

namespace wafersim::workloads {

namespace {

constexpr double kMaxWidth = 1 << 24;
constexpr double kMaxLayers = 4096;
// ExpertRouter keeps its partial shuffle on the stack; real models route to at most 16.
constexpr double kMaxTopK = 64;

std::vector<std::string> dtype_choices() {
  std::vector<std::string> names;
  for (const char* const* name = dtype_names(); *name; ++name) names.emplace_back(*name);
  return names;
}

Dtype read_dtype(const config::Config& config, const std::string& path) {
  Dtype dtype{};
  if (!parse_dtype(config.get_string(path), &dtype)) config.fail(path, "unknown dtype");
  return dtype;
}

uint32_t read_u32(const config::Config& config, const std::string& path) {
  return static_cast<uint32_t>(config.get_int(path));
}

}  // namespace

void declare_model_params(config::Schema& schema) {
  using config::bool_param;
  using config::enum_param;
  using config::int_param;
  using config::string_param;
  const std::vector<std::string> dtypes = dtype_choices();

  schema.add(string_param("model.name", "\"\"", "Model name used in reports; empty = the preset name"));
  schema.add(int_param("model.d_model", "elements", std::nullopt, 1, kMaxWidth, "Width of the residual stream"));
  schema.add(int_param("model.n_layers", "layers", std::nullopt, 1, kMaxLayers, "Transformer layers"));
  schema.add(int_param("model.n_heads", "heads", std::nullopt, 1, 4096, "Query heads per layer"));
  schema.add(int_param("model.n_kv_heads", "heads", std::nullopt, 1, 4096,
                       "Key/value heads per layer (= n_heads: multi-head; 1: multi-query; else grouped-query)"));
  schema.add(int_param("model.head_dim", "elements", std::nullopt, 1, 65536, "Width of one attention head"));
  schema.add(int_param("model.ffn_dim", "elements", "0", 0, kMaxWidth,
                       "Hidden width of the dense MLP; 0 when every layer is MoE"));
  schema.add(int_param("model.vocab_size", "tokens", std::nullopt, 1, kMaxWidth, "Vocabulary size"));
  schema.add(int_param("model.max_positions", "tokens", std::nullopt, 1, 1 << 26,
                       "Longest context the model supports (rows of the table with learned positions)"));
  schema.add(enum_param("model.norm", {"rmsnorm", "layernorm"}, "rmsnorm", "Normalisation (LayerNorm adds a bias)"));
  schema.add(enum_param("model.positions", {"rotary", "learned"}, "rotary",
                        "Rotary position embedding, or a learned table added to the input"));
  schema.add(enum_param("model.mlp", {"swiglu", "plain"}, "swiglu",
                        "Gated MLP (gate, up, down) or plain MLP (up, activation, down)"));
  schema.add(bool_param("model.tied_embeddings", false, "LM head shares the input embedding table"));
  schema.add(bool_param("model.qkv_bias", false, "Bias on the Q, K and V projections"));
  schema.add(bool_param("model.o_bias", false, "Bias on the attention output projection"));
  schema.add(bool_param("model.mlp_bias", false, "Bias on the MLP and expert projections"));
  schema.add(bool_param("model.qk_norm", false, "RMSNorm on each query and key head before rotary"));
  schema.add(bool_param("model.attention_sinks", false, "One learned sink logit per head joins the softmax"));
  schema.add(int_param("model.sliding_window", "tokens", "0", 0, 1 << 26,
                       "Positions a windowed layer attends to; 0 = no window"));
  schema.add(int_param("model.sliding_window_every", "layers", "0", 0, kMaxLayers,
                       "Layers with index % every == 0 use the window; 0 = every layer does"));
  schema.add(enum_param("model.weight_dtype", dtypes, "bf16", "Weights other than experts, biases and norms"));
  schema.add(enum_param("model.moe_weight_dtype", dtypes, "bf16", "Expert weights (routed and shared)"));
  schema.add(enum_param("model.kv_dtype", dtypes, "bf16", "KV cache"));
  schema.add(enum_param("model.activation_dtype", dtypes, "bf16", "Activations passed between operations"));
  schema.add(int_param("model.moe.n_experts", "experts", "0", 0, 65536, "Routed experts per MoE layer; 0 = dense"));
  schema.add(int_param("model.moe.top_k", "experts", "0", 0, kMaxTopK, "Routed experts each token uses"));
  schema.add(int_param("model.moe.n_shared_experts", "experts", "0", 0, 64,
                       "Experts every token uses, besides the routed ones"));
  schema.add(int_param("model.moe.expert_ffn_dim", "elements", "0", 0, kMaxWidth,
                       "Hidden width of one expert (routed and shared)"));
  config::ParamSpec layers;
  layers.path = "model.moe.layers";
  layers.type = config::ParamType::IntList;
  layers.unit = "layer index";
  layers.default_value = "[]";
  layers.min = 0;  // the upper bound depends on n_layers: model_from_config checks it
  layers.description = "Indices of the MoE layers; empty = every layer";
  schema.add(layers);
  schema.add(bool_param("model.moe.router_bias", false, "Bias on the router projection"));
}

namespace {

void read_moe(const config::Config& config, ModelSpec& model) {
  MoeSpec& moe = model.moe;
  moe.n_experts = read_u32(config, "model.moe.n_experts");
  moe.top_k = read_u32(config, "model.moe.top_k");
  moe.n_shared_experts = read_u32(config, "model.moe.n_shared_experts");
  moe.expert_ffn_dim = read_u32(config, "model.moe.expert_ffn_dim");
  moe.router_bias = config.get_bool("model.moe.router_bias");
  const std::vector<int64_t>& layers = config.get_int_list("model.moe.layers");

  if (moe.n_experts == 0) {
    // A dense model with MoE settings is most likely a typo in n_experts.
    for (const char* path : {"model.moe.top_k", "model.moe.n_shared_experts", "model.moe.expert_ffn_dim",
                             "model.moe.layers", "model.moe.router_bias"})
      if (!config.is_default(path))
        config.fail_given({path, "model.moe.n_experts"},
                          std::string(path) + " is set but model.moe.n_experts is 0 (a dense model)");
    return;
  }
  const std::vector<std::string> routing = {"model.moe.top_k", "model.moe.n_experts"};
  if (moe.top_k == 0)
    config.fail_given(routing, "model.moe.top_k must be at least 1 when model.moe.n_experts > 0 (it is " +
                                   std::to_string(moe.n_experts) + ")");
  if (moe.top_k > moe.n_experts)
    config.fail_given(routing, "model.moe.top_k is " + std::to_string(moe.top_k) + " but there are only " +
                                   std::to_string(moe.n_experts) + " experts (model.moe.n_experts)");
  if (moe.expert_ffn_dim == 0)
    config.fail_given({"model.moe.expert_ffn_dim", "model.moe.n_experts"},
                      "model.moe.expert_ffn_dim must be at least 1 when model.moe.n_experts > 0");

  for (int64_t layer : layers) {
    if (layer < 0 || layer >= int64_t(model.n_layers))
      config.fail_given({"model.moe.layers", "model.n_layers"},
                        "model.moe.layers names layer " + std::to_string(layer) + " but the model has " +
                            std::to_string(model.n_layers) + " layers (model.n_layers; 0.." +
                            std::to_string(model.n_layers - 1) + ")");
    moe.layers.push_back(uint32_t(layer));
  }
  std::sort(moe.layers.begin(), moe.layers.end());
  if (std::adjacent_find(moe.layers.begin(), moe.layers.end()) != moe.layers.end())
    config.fail("model.moe.layers", "lists a layer twice");
  if (moe.layers.empty())
    for (uint32_t layer = 0; layer < model.n_layers; ++layer) moe.layers.push_back(layer);
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

  if (model.sliding_window_every != 0 && model.sliding_window == 0)
    config.fail_given({"model.sliding_window_every", "model.sliding_window"},
                      "model.sliding_window_every needs model.sliding_window > 0");
  if (model.sliding_window > model.max_positions)
    config.fail_given({"model.sliding_window", "model.max_positions"},
                      "model.sliding_window (" + std::to_string(model.sliding_window) +
                          ") is longer than model.max_positions (" + std::to_string(model.max_positions) + ")");
}

}  // namespace

ModelSpec model_from_config(const config::Config& config) {
  ModelSpec model;
  model.name = config.get_string("model.name");
  if (model.name.empty()) model.name = config.preset("model");
  if (model.name.empty()) model.name = "custom";
  model.d_model = read_u32(config, "model.d_model");
  model.n_layers = read_u32(config, "model.n_layers");
  model.n_heads = read_u32(config, "model.n_heads");
  model.n_kv_heads = read_u32(config, "model.n_kv_heads");
  model.head_dim = read_u32(config, "model.head_dim");
  model.ffn_dim = read_u32(config, "model.ffn_dim");
  model.vocab_size = read_u32(config, "model.vocab_size");
  model.max_positions = read_u32(config, "model.max_positions");
  model.norm = config.get_string("model.norm") == "layernorm" ? NormKind::LayerNorm : NormKind::RMSNorm;
  model.positions = config.get_string("model.positions") == "learned" ? PositionKind::Learned : PositionKind::Rotary;
  model.mlp = config.get_string("model.mlp") == "plain" ? MlpKind::Plain : MlpKind::SwiGLU;
  model.tied_embeddings = config.get_bool("model.tied_embeddings");
  model.qkv_bias = config.get_bool("model.qkv_bias");
  model.o_bias = config.get_bool("model.o_bias");
  model.mlp_bias = config.get_bool("model.mlp_bias");
  model.qk_norm = config.get_bool("model.qk_norm");
  model.attention_sinks = config.get_bool("model.attention_sinks");
  model.sliding_window = read_u32(config, "model.sliding_window");
  model.sliding_window_every = read_u32(config, "model.sliding_window_every");
  model.weight_dtype = read_dtype(config, "model.weight_dtype");
  model.moe_weight_dtype = read_dtype(config, "model.moe_weight_dtype");
  model.kv_dtype = read_dtype(config, "model.kv_dtype");
  model.activation_dtype = read_dtype(config, "model.activation_dtype");
  read_moe(config, model);
  check_shape(config, model);
  return model;
}

}  // namespace wafersim::workloads
