// Models from a Hugging Face config.json: one public config per family gives
// exactly the zoo model's parameter count, and what cannot be read is one
// error naming the file and the key.
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kHf = std::string(WAFERSIM_TEST_DATA) + "/hf/";

json describe(const std::string& model) {
  const Outcome outcome = run_wafersim({"describe", "model", model, "--quiet", "--json", "-"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out);
}

}  // namespace

TEST_CASE("a config.json of each family has the zoo model's parameter count", "[cli][hf]") {
  const std::vector<std::pair<std::string, std::string>> pairs = {{"Llama-3.1-8B", "llama3.1-8b"},
                                                                  {"Qwen2-72B", "qwen2-72b"},
                                                                  {"Qwen3-32B", "qwen3-32b"},
                                                                  {"Qwen3-235B-A22B", "qwen3-235b-a22b"},
                                                                  {"gpt-oss-120b", "gpt-oss-120b"}};
  for (const auto& [folder, zoo] : pairs) {
    INFO(folder);
    const json from_hf = describe(kHf + folder + "/config.json");
    const json from_zoo = describe(zoo);
    CHECK(from_hf["model"] == folder);
    CHECK(from_hf["params_total"] == from_zoo["params_total"]);
    CHECK(from_hf["params_active"] == from_zoo["params_active"]);
    CHECK(from_hf["weight_bytes"] == from_zoo["weight_bytes"]);
    CHECK(from_hf["kv_bytes_per_token"] == from_zoo["kv_bytes_per_token"]);
    CHECK(from_hf["flops_per_token"] == from_zoo["flops_per_token"]);
  }
  // Families the zoo lacks: the parameters of their published weights.
  const json mixtral = describe(kHf + "Mixtral-8x7B-v0.1/config.json");
  CHECK(mixtral["params_total"] == 46702792704ull);
  const json mistral = describe(kHf + "Mistral-7B-v0.1/config.json");
  CHECK(mistral["params_total"] == 7241732096ull);
  const json phi3 = describe(kHf + "Phi-3-mini-4k-instruct/config.json");
  CHECK(phi3["params_total"] == 3821079552ull);
}

TEST_CASE("Mistral and Phi-3 are dense families with a sliding window", "[cli][hf]") {
  for (const auto& [folder, window] :
       {std::pair<std::string, std::string>{"Mistral-7B-v0.1", "4096"}, {"Phi-3-mini-4k-instruct", "2047"}}) {
    INFO(folder);
    const Outcome shown = run_wafersim({"describe", "model", kHf + folder + "/config.json"});
    INFO(shown.err);
    REQUIRE(shown.exit_code == 0);
    CHECK(shown.out.find("dense, sliding window of " + window) != std::string::npos);
    CHECK(shown.out.find("MoE") == std::string::npos);
  }
}

TEST_CASE("an experiment names a config.json as its model", "[cli][hf]") {
  Scratch scratch;
  const std::string experiment = scratch.write(
      "exp.yaml", "hardware: wse3\nmodel: " + kHf + "Llama-3.1-8B/config.json\nworkload: {prompt_tokens: 64}\n");
  const Outcome hf = run_wafersim({"analytic", experiment, "--quiet", "--json", "-"});
  INFO(hf.err);
  REQUIRE(hf.exit_code == 0);
  const Outcome zoo = run_wafersim({"analytic", experiment, "--set", "model=llama3.1-8b", "--set",
                                    "model.name=Llama-3.1-8B", "--quiet", "--json", "-"});
  REQUIRE(zoo.exit_code == 0);
  CHECK(json::parse(hf.out)["metrics"] == json::parse(zoo.out)["metrics"]);
  CHECK(json::parse(hf.out)["experiment"]["model"] == "Llama-3.1-8B");
}

TEST_CASE("a config.json wafersim cannot read is one error naming the key", "[cli][hf]") {
  Scratch scratch;
  const std::string unknown =
      scratch.write("unknown.json", "{\n  \"architectures\": [\"BertModel\"],\n  \"hidden_size\": 768\n}\n");
  Outcome outcome = run_wafersim({"describe", "model", unknown});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find(unknown + ":2:") != std::string::npos);
  CHECK(outcome.err.find("unknown architecture 'BertModel'") != std::string::npos);

  const std::string missing =
      scratch.write("missing.json",
                    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2,\n"
                    " \"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 128, "
                    "\"intermediate_size\": 128}\n");
  outcome = run_wafersim({"describe", "model", missing});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("missing key 'num_key_value_heads'") != std::string::npos);
  CHECK(outcome.err.find(missing) != std::string::npos);

  const std::string out_of_range =
      scratch.write("range.json",
                    "{\"architectures\": [\"LlamaForCausalLM\"],\n \"hidden_size\": 64, \"num_hidden_layers\": 0,\n"
                    " \"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"vocab_size\": 100,\n"
                    " \"max_position_embeddings\": 128, \"intermediate_size\": 128}\n");
  outcome = run_wafersim({"describe", "model", out_of_range});
  CHECK(outcome.exit_code == 2);
  // The value's own place in the file, under the model key it becomes.
  CHECK(outcome.err.find(out_of_range + ":2:42") != std::string::npos);
  CHECK(outcome.err.find("model.n_layers") != std::string::npos);
}

TEST_CASE("a config.json that rotates part of each head is refused at its key", "[cli][hf]") {
  Scratch scratch;
  std::ifstream published(kHf + "Phi-3-mini-4k-instruct/config.json");
  std::string text((std::istreambuf_iterator<char>(published)), std::istreambuf_iterator<char>());
  text.replace(text.find("\"attention_bias\""), 0, "\"partial_rotary_factor\": 0.75,\n  ");
  const std::string file = scratch.write("config.json", text);
  const Outcome outcome = run_wafersim({"describe", "model", file});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("'partial_rotary_factor' '0.75'"));
}
