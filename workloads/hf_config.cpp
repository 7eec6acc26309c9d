#include "workloads/hf_config.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "models/config/error.h"
#include "models/config/source_text.h"
#include "models/config/text.h"

namespace wafersim::workloads {

namespace {

// Reads one config.json: every error names the file, the place and the key.
class HfConfig {
 public:
  HfConfig(const YAML::Node& root, std::string file) : root_(root), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    const YAML::Node node = root_[key];
    const config::SourceLocation where =
        node ? config::location_of(file_, node.Mark()) : config::SourceLocation{file_, 0, 0};
    throw config::ConfigError(where, key, message);
  }

  bool has(const std::string& key) const { return root_[key] && !root_[key].IsNull(); }

  // The value node itself, so that a range error later points at it.
  YAML::Node required(const std::string& key, const std::string& why) const {
    if (!has(key))
      fail(key, "missing key " + config::quoted(key) + " in a " + architecture_ + " config.json (" + why + ")");
    return root_[key];
  }

  int64_t integer(const std::string& key, const std::string& why) const {
    const YAML::Node node = required(key, why);
    try {
      return node.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(key, config::quoted(key) + " must be an integer");
    }
  }

  bool flag(const std::string& key, bool absent) const {
    if (!has(key)) return absent;
    try {
      return root_[key].as<bool>();
    } catch (const YAML::Exception&) {
      fail(key, config::quoted(key) + " must be true or false");
    }
  }

  std::string text(const std::string& key) const {
    if (!has(key)) return "";
    if (!root_[key].IsScalar()) fail(key, config::quoted(key) + " must be a string");
    return root_[key].Scalar();
  }

  const YAML::Node& root() const { return root_; }
  void set_architecture(const std::string& name) { architecture_ = name; }

 private:
  YAML::Node root_;
  std::string file_;
  std::string architecture_ = "model";
};

// The model's name: the folder of a file called config.json ("Llama-3.1-8B"), else the file's stem.
std::string model_name(const std::string& file) {
  const std::filesystem::path path(file);
  if (path.filename() == "config.json" && path.has_parent_path()) {
    const std::string folder = std::filesystem::absolute(path).parent_path().filename().string();
    if (!folder.empty()) return folder;
  }
  return path.stem().string();
}

// Which layers are MoE in a Qwen3-MoE model: every decoder_sparse_step-th, less mlp_only_layers.
std::vector<int64_t> qwen3_moe_layers(const HfConfig& hf, int64_t n_layers) {
  const int64_t step = hf.has("decoder_sparse_step") ? hf.integer("decoder_sparse_step", "") : 1;
  if (step < 1) hf.fail("decoder_sparse_step", "'decoder_sparse_step' must be at least 1");
  std::vector<int64_t> dense;
  if (hf.has("mlp_only_layers")) {
    const YAML::Node list = hf.root()["mlp_only_layers"];
    if (!list.IsSequence()) hf.fail("mlp_only_layers", "'mlp_only_layers' must be a list of layer indices");
    for (const YAML::Node& layer : list) dense.push_back(layer.as<int64_t>());
  }
  std::vector<int64_t> moe;
  for (int64_t layer = 0; layer < n_layers; ++layer)
    if ((layer + 1) % step == 0 && std::find(dense.begin(), dense.end(), layer) == dense.end()) moe.push_back(layer);
  return moe;
}

// gpt-oss's layer_types: "sliding_attention" on even layers and "full_attention" on odd ones is
// sliding_window_every 2; all sliding is every 0. Other patterns the model spec cannot express.
int64_t sliding_window_every(const HfConfig& hf, int64_t n_layers) {
  if (!hf.has("layer_types")) return 0;
  const YAML::Node types = hf.root()["layer_types"];
  if (!types.IsSequence() || int64_t(types.size()) != n_layers)
    hf.fail("layer_types", "'layer_types' must list one type per layer (" + std::to_string(n_layers) + ")");
  bool all_sliding = true, alternating = true;
  for (int64_t layer = 0; layer < n_layers; ++layer) {
    const bool sliding = types[size_t(layer)].Scalar() == "sliding_attention";
    all_sliding = all_sliding && sliding;
    alternating = alternating && sliding == (layer % 2 == 0);
  }
  if (all_sliding) return 0;
  if (alternating) return 2;
  hf.fail("layer_types",
          "'layer_types' mixes sliding and full attention in a pattern the model spec cannot express "
          "(model.sliding_window_every: every layer, or every n-th from layer 0)");
}

// What each architecture reads of its MLP: dense, or experts into `moe`.
void read_dense_mlp(const HfConfig& hf, int64_t, YAML::Node& keys, YAML::Node&) {
  keys["ffn_dim"] = hf.required("intermediate_size", "model.ffn_dim");
}

void read_qwen3_moe_mlp(const HfConfig& hf, int64_t n_layers, YAML::Node& keys, YAML::Node& moe) {
  moe["n_experts"] = hf.required("num_experts", "model.moe.n_experts");
  moe["top_k"] = hf.required("num_experts_per_tok", "model.moe.top_k");
  moe["expert_ffn_dim"] = hf.required("moe_intermediate_size", "model.moe.expert_ffn_dim");
  const std::vector<int64_t> layers = qwen3_moe_layers(hf, n_layers);
  if (int64_t(layers.size()) == n_layers) {
    keys["ffn_dim"] = 0;
  } else {
    keys["ffn_dim"] = hf.required("intermediate_size", "model.ffn_dim of the dense layers");
    YAML::Node list(YAML::NodeType::Sequence);
    for (int64_t layer : layers) list.push_back(layer);
    moe["layers"] = list;
  }
}

void read_mixtral_mlp(const HfConfig& hf, int64_t, YAML::Node& keys, YAML::Node& moe) {
  keys["ffn_dim"] = 0;
  moe["n_experts"] = hf.required("num_local_experts", "model.moe.n_experts");
  moe["top_k"] = hf.required("num_experts_per_tok", "model.moe.top_k");
  moe["expert_ffn_dim"] = hf.required("intermediate_size", "model.moe.expert_ffn_dim");
}

// gpt-oss's experts, and the attention (sinks, alternating windows) that comes with them.
void read_gpt_oss_mlp(const HfConfig& hf, int64_t n_layers, YAML::Node& keys, YAML::Node& moe) {
  keys["ffn_dim"] = 0;
  moe["n_experts"] = hf.required("num_local_experts", "model.moe.n_experts");
  moe["top_k"] = hf.has("num_experts_per_tok") ? hf.root()["num_experts_per_tok"]
                                               : hf.required("experts_per_token", "model.moe.top_k");
  moe["expert_ffn_dim"] = hf.required("intermediate_size", "model.moe.expert_ffn_dim");
  moe["router_bias"] = true;
  keys["attention_sinks"] = true;
  keys["sliding_window"] = hf.required("sliding_window", "model.sliding_window");
  keys["sliding_window_every"] = sliding_window_every(hf, n_layers);
  const YAML::Node quantization = hf.root()["quantization_config"];
  if (quantization && quantization.IsMap() && quantization["quant_method"] && quantization["quant_method"].IsScalar() &&
      quantization["quant_method"].Scalar() == "mxfp4")
    keys["moe_weight_dtype"] = "mxfp4";
}

// DeepSeek-V3's dense layers (the first first_k_dense_replace) and its MoE
// layers (then every moe_layer_freq-th, as Hugging Face's DeepseekV3 picks
// them): routed experts with a bias on their scores (e_score_correction_bias)
// and shared experts beside them. The group-limited routing (n_group,
// topk_group) is the seeded router's to draw (docs/WORKLOADS.md).
void read_deepseek_v3_mlp(const HfConfig& hf, int64_t n_layers, YAML::Node& keys, YAML::Node& moe) {
  moe["n_experts"] = hf.required("n_routed_experts", "model.moe.n_experts");
  moe["top_k"] = hf.required("num_experts_per_tok", "model.moe.top_k");
  moe["expert_ffn_dim"] = hf.required("moe_intermediate_size", "model.moe.expert_ffn_dim");
  if (hf.has("n_shared_experts")) moe["n_shared_experts"] = hf.root()["n_shared_experts"];
  moe["router_bias"] = true;
  const int64_t first_moe = hf.has("first_k_dense_replace") ? hf.integer("first_k_dense_replace", "") : 0;
  const int64_t every = hf.has("moe_layer_freq") ? hf.integer("moe_layer_freq", "") : 1;
  if (first_moe < 0) hf.fail("first_k_dense_replace", "'first_k_dense_replace' must be at least 0");
  if (every < 1) hf.fail("moe_layer_freq", "'moe_layer_freq' must be at least 1");
  YAML::Node layers(YAML::NodeType::Sequence);
  for (int64_t layer = first_moe; layer < n_layers; ++layer)
    if (layer % every == 0) layers.push_back(layer);
  if (int64_t(layers.size()) == n_layers) {
    keys["ffn_dim"] = 0;
  } else {
    keys["ffn_dim"] = hf.required("intermediate_size", "model.ffn_dim of the dense layers");
    moe["layers"] = layers;
  }
}

// DeepSeek-V3's attention: multi-head latent attention, each head's
// qk_nope_head_dim wide (model.head_dim) besides its rotary part; and its
// FP8 release (quantization_config.quant_method fp8), which counts every
// weight at one byte as the zoo's deepseek-v3 does.
void read_deepseek_v3_layer(const HfConfig& hf, YAML::Node& keys) {
  keys["head_dim"] = hf.required("qk_nope_head_dim", "model.head_dim");
  YAML::Node mla(YAML::NodeType::Map);
  mla["q_lora_rank"] = hf.required("q_lora_rank", "model.mla.q_lora_rank; queries without a latent are not modelled");
  mla["kv_lora_rank"] = hf.required("kv_lora_rank", "model.mla.kv_lora_rank");
  mla["qk_rope_head_dim"] = hf.required("qk_rope_head_dim", "model.mla.qk_rope_head_dim");
  mla["v_head_dim"] = hf.required("v_head_dim", "model.mla.v_head_dim");
  keys["mla"] = mla;
  const YAML::Node quantization = hf.root()["quantization_config"];
  if (quantization && quantization.IsMap() && quantization["quant_method"] && quantization["quant_method"].IsScalar() &&
      quantization["quant_method"].Scalar() == "fp8") {
    keys["weight_dtype"] = "fp8";
    keys["moe_weight_dtype"] = "fp8";
  }
}

// The GELU of the model spec is the tanh approximation, which these names of
// Hugging Face's activations compute (the exact, erf-based "gelu" they do not).
bool tanh_gelu(const std::string& activation) {
  return activation == "gelu_pytorch_tanh" || activation == "gelu_new" || activation == "gelu_fast";
}

// What each architecture's MLP computes: the model.mlp it becomes.
const char* silu_gated_mlp(const HfConfig& hf) {
  const std::string activation = hf.text("hidden_act");
  if (!activation.empty() && activation != "silu" && activation != "swish")
    hf.fail("hidden_act", "'hidden_act' " + config::quoted(activation) +
                              ": wafersim models this family's gated MLP with SiLU (swiglu) only");
  return "swiglu";
}

// Gemma gates with GELU: hidden_activation names it, and without one Hugging
// Face's Gemma takes the tanh approximation whatever hidden_act says.
const char* gemma_mlp(const HfConfig& hf) {
  const std::string activation = hf.text("hidden_activation");
  if (!activation.empty() && !tanh_gelu(activation))
    hf.fail("hidden_activation", "'hidden_activation' " + config::quoted(activation) +
                                     ": wafersim models Gemma's gated MLP with the tanh approximation of GELU "
                                     "(gelu_pytorch_tanh) only");
  return "geglu";
}

// Phi: fc1, the activation, fc2 (no gate).
const char* phi_mlp(const HfConfig& hf) {
  const std::string activation = hf.text("hidden_act");
  if (!activation.empty() && !tanh_gelu(activation))
    hf.fail("hidden_act", "'hidden_act' " + config::quoted(activation) +
                              ": wafersim models Phi's MLP with the tanh approximation of GELU (gelu_new) only");
  return "plain";
}

// Phi (1, 1.5, 2): attention and the MLP side by side from one LayerNorm,
// biases on every projection and on the LM head.
void read_phi_layer(const HfConfig& hf, YAML::Node& keys) {
  if (hf.flag("qk_layernorm", false))
    hf.fail("qk_layernorm",
            "'qk_layernorm' true: Phi's per-head LayerNorm of queries and keys is not in the model spec "
            "(model.qk_norm is an RMSNorm)");
  keys["norm"] = "layernorm";
  keys["parallel_residual"] = true;
  keys["qkv_bias"] = true;
  keys["o_bias"] = true;
  keys["mlp_bias"] = true;
  keys["lm_head_bias"] = true;
}

// One architecture wafersim reads, declared once: the names that pick it and
// everything that sets it apart from the keys all of them share, so a name
// cannot be accepted without its reader (docs/WORKLOADS.md lists them).
struct Architecture {
  const char* name;              // config.json's architectures[0]
  const char* model_type;        // its model_type
  bool qkv_bias_only;            // biases on q, k and v and none on o, whatever attention_bias says
  bool mlp_bias_when_absent;     // mlp_bias when config.json does not say
  bool qk_norm;                  // per-head norms on q and k
  bool sliding_window_when_set;  // every layer attends to `sliding_window` positions when config.json sets it
  void (*read_mlp)(const HfConfig& hf, int64_t n_layers, YAML::Node& keys, YAML::Node& moe);
  bool tied_when_absent = false;                                  // tie_word_embeddings when config.json does not say
  const char* (*mlp_kind)(const HfConfig& hf) = &silu_gated_mlp;  // model.mlp, from the activation
  void (*read_layer)(const HfConfig& hf, YAML::Node& keys) = nullptr;  // what else the layer's form sets
};

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> table = {
      {"LlamaForCausalLM", "llama", false, false, false, false, &read_dense_mlp},
      {"MistralForCausalLM", "mistral", false, false, false, true, &read_dense_mlp},
      {"Phi3ForCausalLM", "phi3", false, false, false, true, &read_dense_mlp},
      {"Qwen2ForCausalLM", "qwen2", true, false, false, false, &read_dense_mlp},
      {"Qwen3ForCausalLM", "qwen3", false, false, true, false, &read_dense_mlp},
      {"Qwen3MoeForCausalLM", "qwen3_moe", false, false, true, false, &read_qwen3_moe_mlp},
      {"MixtralForCausalLM", "mixtral", false, false, false, true, &read_mixtral_mlp},
      {"GptOssForCausalLM", "gpt_oss", false, true, false, false, &read_gpt_oss_mlp},
      {"GemmaForCausalLM", "gemma", false, false, false, false, &read_dense_mlp, true, &gemma_mlp},
      {"PhiForCausalLM", "phi", false, false, false, false, &read_dense_mlp, false, &phi_mlp, &read_phi_layer},
      {"DeepseekV3ForCausalLM", "deepseek_v3", false, false, false, false, &read_deepseek_v3_mlp, false,
       &silu_gated_mlp, &read_deepseek_v3_layer},
  };
  return table;
}

const Architecture& architecture_of(HfConfig& hf) {
  std::vector<std::string> known;
  for (const Architecture& a : architectures()) known.push_back(a.name);
  std::string name;
  const YAML::Node listed = hf.root()["architectures"];
  if (listed && listed.IsSequence() && listed.size() >= 1 && listed[0].IsScalar()) {
    name = listed[0].Scalar();
  } else {
    const std::string type = hf.text("model_type");
    for (const Architecture& a : architectures())
      if (type == a.model_type) name = a.name;
    if (name.empty())
      hf.fail(hf.has("architectures") ? "architectures" : "model_type",
              "config.json names no architecture wafersim reads: 'architectures' (or 'model_type') must be one of " +
                  config::join(known));
  }
  for (const Architecture& a : architectures())
    if (name == a.name) {
      hf.set_architecture(name);
      return a;
    }
  hf.fail("architectures", "unknown architecture " + config::quoted(name) + " (wafersim reads " + config::join(known) +
                               ")" + config::did_you_mean(name, known));
}

}  // namespace

YAML::Node model_keys_from_hf_config(const YAML::Node& root, const std::string& file) {
  if (!root.IsMap())
    throw config::ConfigError(config::location_of(file, root.Mark()), "model",
                              "a Hugging Face config.json holds one JSON object");
  HfConfig hf(root, file);
  const Architecture& architecture = architecture_of(hf);

  YAML::Node keys(YAML::NodeType::Map);
  keys["name"] = model_name(file);
  keys["d_model"] = hf.required("hidden_size", "model.d_model");
  keys["n_layers"] = hf.required("num_hidden_layers", "model.n_layers");
  keys["n_heads"] = hf.required("num_attention_heads", "model.n_heads");
  keys["n_kv_heads"] = hf.required("num_key_value_heads", "model.n_kv_heads");
  if (hf.has("head_dim")) {
    keys["head_dim"] = hf.root()["head_dim"];
  } else {
    const int64_t heads = hf.integer("num_attention_heads", "model.n_heads");
    const int64_t width = hf.integer("hidden_size", "model.d_model");
    if (heads <= 0 || width % heads != 0)
      hf.fail("num_attention_heads", "no 'head_dim', and 'hidden_size' " + std::to_string(width) +
                                         " is not a multiple of 'num_attention_heads' " + std::to_string(heads));
    keys["head_dim"] = width / heads;
  }
  keys["vocab_size"] = hf.required("vocab_size", "model.vocab_size");
  keys["max_positions"] = hf.required("max_position_embeddings", "model.max_positions");
  keys["tied_embeddings"] = hf.flag("tie_word_embeddings", architecture.tied_when_absent);
  keys["norm"] = "rmsnorm";
  keys["positions"] = "rotary";
  // Phi-2 rotates 40 % of each head, Phi-3.5 and Phi-4-mini three quarters:
  // int(partial_rotary_factor x head_dim) elements, as Hugging Face rounds it.
  if (hf.has("partial_rotary_factor")) {
    const YAML::Node node = hf.root()["partial_rotary_factor"];
    const std::string written = config::quoted(node.Scalar());
    double factor = 0;
    try {
      factor = node.as<double>();
    } catch (const YAML::Exception&) {
      hf.fail("partial_rotary_factor", "'partial_rotary_factor' must be a number");
    }
    if (!(factor > 0 && factor <= 1))
      hf.fail("partial_rotary_factor",
              "'partial_rotary_factor' " + written + " must be above 0 and at most 1 (the share of each head rotated)");
    const int64_t head_dim =
        hf.has("head_dim") ? hf.integer("head_dim", "model.head_dim") : keys["head_dim"].as<int64_t>();
    const int64_t rotated = int64_t(factor * double(head_dim));
    if (head_dim > 0 && rotated < head_dim) {
      if (rotated < 2 || rotated % 2 != 0)
        hf.fail("partial_rotary_factor", "'partial_rotary_factor' " + written + " rotates " + std::to_string(rotated) +
                                             " of " + std::to_string(head_dim) +
                                             " elements of each head; rotary turns pairs (an even number)");
      keys["rotary_dim"] = rotated;
    }
  }
  keys["mlp"] = architecture.mlp_kind(hf);

  const bool attention_bias = hf.flag("attention_bias", false);
  keys["qkv_bias"] = architecture.qkv_bias_only || attention_bias;
  keys["o_bias"] = !architecture.qkv_bias_only && attention_bias;
  keys["mlp_bias"] = hf.flag("mlp_bias", architecture.mlp_bias_when_absent);
  keys["qk_norm"] = architecture.qk_norm;
  if (architecture.sliding_window_when_set && hf.has("sliding_window"))
    keys["sliding_window"] = hf.root()["sliding_window"];
  if (architecture.read_layer) architecture.read_layer(hf, keys);

  YAML::Node moe(YAML::NodeType::Map);
  architecture.read_mlp(hf, hf.integer("num_hidden_layers", "model.n_layers"), keys, moe);
  if (moe.size() > 0) keys["moe"] = moe;
  return keys;
}

void add_hf_config_reader(config::LoadOptions& options) { options.json_readers["model"] = &model_keys_from_hf_config; }

}  // namespace wafersim::workloads
