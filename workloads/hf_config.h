#pragma once
// Models from a Hugging Face config.json: `model: path/to/config.json` in an
// experiment and `wafersim describe model path/to/config.json` read the
// standard keys of the Llama, Mistral, Phi-3, Qwen2, Qwen3, Qwen3-MoE, Mixtral,
// gpt-oss, Gemma, Phi (1, 1.5, 2) and DeepSeek-V3 families into the model section's keys
// (docs/WORKLOADS.md lists them).
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/config/config.h"

namespace wafersim::workloads {

// The model section's keys for the parsed config.json `root` read from `file`.
// An unknown architecture, a missing key or a value the model spec cannot
// express is a ConfigError naming the file, the line and the key.
YAML::Node model_keys_from_hf_config(const YAML::Node& root, const std::string& file);

// Registers model_keys_from_hf_config for the model section.
void add_hf_config_reader(config::LoadOptions& options);

}  // namespace wafersim::workloads
