// `wafersim describe model`, driven as a user would.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../workloads/bad_model_cases.h"
#include "run_wafersim.h"

namespace {

using wafersim::testing::Outcome;

// `wafersim describe model` with the given arguments, split at spaces.
Outcome describe(const std::string& arguments) {
  std::vector<std::string> args = {"describe", "model"};
  std::istringstream words(arguments);
  for (std::string word; words >> word;) args.push_back(word);
  return wafersim::testing::run_wafersim(args);
}

nlohmann::json describe_json(const std::string& arguments) {
  const Outcome run = describe(arguments + " --quiet --json -");
  REQUIRE(run.exit_code == 0);
  return nlohmann::json::parse(run.out);
}

}  // namespace

TEST_CASE("describe model rejects each malformed model file with exit 2, naming file, line and key", "[cli][model]") {
  for (const BadModelCase& bad : kBadModels) {
    INFO(bad.file);
    const Outcome run = describe(std::string(WAFERSIM_TEST_DATA) + "/bad_models/" + bad.file);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(std::string(bad.file) + ":" + std::to_string(bad.line) + ":") != std::string::npos);
    CHECK(run.err.find(bad.key) != std::string::npos);
    CHECK(wafersim::testing::is_one_line(run.err));
  }
}

TEST_CASE("describe model reports llama3.1-8b's published size and per-token costs", "[cli][model]") {
  const uint64_t context = 1024;
  const nlohmann::json d = describe_json("llama3.1-8b --context " + std::to_string(context));
  // Model card: 8.03 B parameters; the input embedding (128256 x 4096) is not active.
  const double total = d["params_total"].get<double>();
  CHECK(std::abs(total - 8.03e9) / 8.03e9 < 0.005);
  CHECK(d["params_active"].get<double>() == total - 128256.0 * 4096);
  CHECK(d["weight_bytes"].get<double>() == 2 * total);  // bf16
  CHECK(d["kv_bytes_per_token"] == 2 * 32 * 8 * 128 * 2);
  CHECK(d["kv_bytes_per_token_per_layer"] == 2 * 8 * 128 * 2);
  CHECK(d["kv_bytes_at_context"] == uint64_t(context) * 2 * 32 * 8 * 128 * 2);
  // 2 FLOPs per active weight, plus q.k and the value sum over the context in 32 layers.
  const double expected = 2 * d["params_active"].get<double>() + 4.0 * 32 * 128 * context * 32;
  CHECK(std::abs(d["flops_per_token"].get<double>() - expected) / expected < 0.005);
  CHECK(d["ops"].size() == 1 + 32 * 17 + 3);  // embedding, 17 ops per layer, final norm, LM head, sample
  CHECK(d["ops"][0]["kind"] == "embedding");
}

TEST_CASE("describe model states the active-parameter convention", "[cli][model]") {
  const Outcome run = describe("tiny-dense");
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("input embedding table is looked up, not multiplied") != std::string::npos);
  CHECK(run.out.find("(bytes)") != std::string::npos);
}

TEST_CASE("describe model: flops per token do not depend on the batch; overrides change dtypes", "[cli][model]") {
  const nlohmann::json one = describe_json("tiny-moe --batch 1 --context 64");
  const nlohmann::json eight = describe_json("tiny-moe --batch 8 --context 64");
  CHECK(one["flops_per_token"] == eight["flops_per_token"]);
  CHECK(eight["batch"] == 8);
  const nlohmann::json fp8 = describe_json("tiny-moe --set model.kv_dtype=fp8");
  CHECK(fp8["kv_bytes_per_token"] == 2 * 2 * 2 * 64 * 1);
}

TEST_CASE("describe model output repeats byte for byte", "[cli][model]") {
  const Outcome a = describe("gpt-oss-120b --batch 3"), b = describe("gpt-oss-120b --batch 3");
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("describe model rejects a context beyond the model's limit and unknown names", "[cli][model]") {
  const Outcome long_context = describe("llama2-13b --context 5000");
  CHECK(long_context.exit_code == 2);
  CHECK(long_context.err.find("max_positions") != std::string::npos);
  const Outcome unknown = describe("llama3.1-9b");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("llama3.1-8b") != std::string::npos);
}

TEST_CASE("describe model without a name lists the zoo: layers and parameters", "[cli][model]") {
  const Outcome list = describe("");
  INFO(list.err);
  REQUIRE(list.exit_code == 0);
  CHECK_THAT(list.out, Catch::Contains("model") && Catch::Contains("layers") && Catch::Contains("parameters"));
  CHECK_THAT(list.out, Catch::Contains("llama3.1-8b ") && Catch::Contains("8.03 B"));
  CHECK_THAT(list.out, Catch::Contains("qwen3-235b-a22b ") && Catch::Contains("tiny-moe "));

  const nlohmann::json zoo = describe_json("")["models"];
  CHECK(zoo.size() >= 12);
  bool found = false;
  for (const nlohmann::json& model : zoo)
    if (model["model"] == "llama3.1-8b") {
      found = true;
      CHECK(model["layers"] == 32);
      // The same count `describe model llama3.1-8b` reports.
      CHECK(model["params_total"] == describe_json("llama3.1-8b")["params_total"]);
    }
  CHECK(found);
}
