// Reading model files: declared parameters, overrides and the cross-field checks.
#include <string>

#include <catch2/catch.hpp>

#include "models/config/config.h"
#include "tests/workloads/bad_model_cases.h"
#include "workloads/model_file.h"

using namespace wafersim;
using namespace wafersim::workloads;

TEST_CASE("each malformed model file is rejected naming file, line and key", "[model][config]") {
  for (const BadModelCase& bad : kBadModels) {
    INFO(bad.file);
    const std::string path = std::string(WAFERSIM_TEST_DATA) + "/bad_models/" + bad.file;
    try {
      load_model(path);
      FAIL("accepted " << bad.file);
    } catch (const config::ConfigError& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(message.find(bad.file) != std::string::npos);
      CHECK(message.find(":" + std::to_string(bad.line) + ":") != std::string::npos);
      CHECK(message.find(bad.key) != std::string::npos);
      CHECK(message.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("an unknown model name lists the zoo", "[model][config]") {
  try {
    load_model("llama3.1-9b");
    FAIL("accepted an unknown model");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()).find("llama3.1-8b") != std::string::npos);
  }
}

TEST_CASE("a model file is read with the zoo's defaults and named after the file", "[model][config]") {
  const LoadedModel loaded = load_model(std::string(WAFERSIM_SOURCE_DIR) + "/workloads/models/tiny-dense.yaml");
  CHECK(loaded.model.name == "tiny-dense");
  CHECK(loaded.model.n_layers == 2);
  CHECK(loaded.model.norm == NormKind::RMSNorm);
  CHECK(loaded.model.weight_dtype == Dtype::BF16);
  CHECK(loaded.model.moe.n_experts == 0);
  CHECK_FALSE(loaded.model.is_moe_layer(0));
}

TEST_CASE("dtype overrides go through --set", "[model][config]") {
  const ModelSpec model =
      load_model("gpt-oss-120b", {"model.weight_dtype=fp16", "model.moe_weight_dtype=fp8", "model.kv_dtype=fp8"}).model;
  CHECK(model.weight_dtype == Dtype::FP16);
  CHECK(model.moe_weight_dtype == Dtype::FP8);
  CHECK(model.kv_dtype == Dtype::FP8);
  // Experts in fp8 take a byte per weight; their biases stay in the 2-byte weight dtype.
  const std::vector<MatrixSpec> matrices = layer_matrices(model, 0);
  const MatrixSpec& down = matrices.back();
  CHECK(down.expert == 127);
  CHECK(down.bytes() == 2880 * 2880 + 2 * 2880);
  CHECK(kv_bytes_per_position(model) == 2 * 8 * 64);
}

TEST_CASE("mxfp4 experts carry one 8-bit scale per 32 weights", "[model]") {
  const ModelSpec model = load_model("gpt-oss-120b").model;
  const MatrixSpec down = layer_matrices(model, 0).back();
  CHECK(down.bytes() == 2880 * 2880 / 2 + 2880 * 2880 / 32 + 2 * 2880);  // + bf16 bias
}

TEST_CASE("MoE layer lists: empty means every layer, otherwise only those named", "[model][config]") {
  const ModelSpec all = load_model("tiny-moe").model;
  CHECK(all.is_moe_layer(0));
  CHECK(all.is_moe_layer(1));
  const ModelSpec some = load_model("tiny-moe", {"model.moe.layers=[1]", "model.ffn_dim=512"}).model;
  CHECK_FALSE(some.is_moe_layer(0));
  CHECK(some.is_moe_layer(1));
  CHECK(layer_matrices(some, 0).size() == 7);              // q k v o gate up down
  CHECK(layer_matrices(some, 1).size() == 4 + 1 + 8 * 3);  // attention, router, 8 experts
}

TEST_CASE("sliding windows apply to every layer or to every n-th", "[model]") {
  const ModelSpec alternating = load_model("gpt-oss-120b").model;
  CHECK(alternating.attended_positions(0, 1000) == 128);
  CHECK(alternating.attended_positions(1, 1000) == 1000);
  CHECK(alternating.attended_positions(2, 100) == 100);
  const ModelSpec every = load_model("tiny-dense", {"model.sliding_window=64"}).model;
  CHECK(every.attended_positions(0, 1000) == 64);
  CHECK(every.attended_positions(1, 1000) == 64);
}

TEST_CASE("an experiment's model section can start from a zoo model and change keys", "[model][config]") {
  static const config::Schema schema{declare_model_params};
  config::LoadOptions options;
  options.presets["model"] = &embedded_model_zoo();
  const config::Config config =
      config::load_string(schema, "model:\n  preset: tiny-dense\n  kv_dtype: fp8\n", "exp.yaml", options);
  const ModelSpec model = model_from_config(config);
  CHECK(model.name == "tiny-dense");
  CHECK(model.d_model == 256);
  CHECK(model.kv_dtype == Dtype::FP8);
}
