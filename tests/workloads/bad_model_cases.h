#pragma once
// Malformed model files in tests/data/bad_models/ and where each must be reported.
// The unit tests load them directly; the CLI tests drive `wafersim describe model`.

struct BadModelCase {
  const char* file;  // in tests/data/bad_models/
  const char* key;   // the parameter the message must name
  int line;          // the line of the offending value (1-based)
};

inline const BadModelCase kBadModels[] = {
    {"negative_size.yaml", "model.d_model", 2},
    {"heads_not_divisible.yaml", "model.n_kv_heads", 5},
    {"top_k_over_experts.yaml", "model.moe.top_k", 11},
    {"zero_vocab.yaml", "model.vocab_size", 8},
    {"moe_layer_out_of_range.yaml", "model.moe.layers", 14},
    {"unknown_key.yaml", "n_head", 4},
    {"wrong_dtype.yaml", "model.weight_dtype", 10},
    {"dense_without_ffn.yaml", "model.ffn_dim", 7},
    {"zero_layers.yaml", "model.n_layers", 3},
    {"wrong_type.yaml", "model.head_dim", 6},
    {"moe_settings_on_dense.yaml", "model.moe.top_k", 11},
    {"duplicate_moe_layer.yaml", "model.moe.layers", 13},
    {"odd_rotary_dim.yaml", "model.rotary_dim", 7},
    {"rotary_dim_over_head.yaml", "model.rotary_dim", 10},
    {"rotary_dim_without_rotary.yaml", "model.rotary_dim", 11},
    {"mla_settings_without_rank.yaml", "model.mla.q_lora_rank", 11},
    // A check between two keys fails at the one given last (config::Config::fail_given).
    {"mla_kv_heads.yaml", "model.mla.kv_lora_rank", 12},
    {"mla_with_sinks.yaml", "model.mla.kv_lora_rank", 13},
};
