// Models from a Hugging Face config.json: one public config per family gives
// exactly the zoo model's parameter count, and what cannot be read is one
// error naming the file and the key.
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kHf = std::string(WAFERSIM_TEST_DATA) + "/hf/";

json describe(const std::string& model, const std::vector<std::string>& settings = {}) {
  std::vector<std::string> args = {"describe", "model", model, "--quiet", "--json", "-"};
  for (const std::string& setting : settings) args.insert(args.end(), {"--set", setting});
  const Outcome outcome = run_wafersim(args);
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out);
}

std::string read_text(const std::string& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The decode graph's op `name` ("layers.0.act"), or null.
json op_named(const json& described, const std::string& name) {
  for (const json& op : described["ops"])
    if (op["name"] == name) return op;
  return nullptr;
}

// A published config with `key` set to `value` (a JSON value), placed before its first key.
std::string with_key(const std::string& text, const std::string& key, const std::string& value) {
  std::string out = text;
  out.insert(out.find('"'), "\"" + key + "\": " + value + ",\n  ");
  return out;
}

// The functional check (sim.functional) of `config_json` on the tiny wafer, decode and prefill.
json functional_check(const std::string& config_json, const std::string& dataflow) {
  Scratch scratch;
  const std::string experiment = scratch.write(
      "exp.yaml",
      "hardware: tiny\nmodel: " + config_json +
          "\nworkload: {batch: 1, prompt_tokens: 6, decode_tokens: 3, seed: 7}\nsim: {contention: false}\n");
  return run_json(
      {"analytic", experiment, "--set", "sim.functional=true", "--set", "mapping.dataflow=" + dataflow})["functional"];
}

}  // namespace

TEST_CASE("a config.json of each family has the zoo model's parameter count", "[cli][hf]") {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"Llama-3.1-8B", "llama3.1-8b"},        {"Qwen2-72B", "qwen2-72b"},       {"Qwen3-32B", "qwen3-32b"},
      {"Qwen3-235B-A22B", "qwen3-235b-a22b"}, {"gpt-oss-120b", "gpt-oss-120b"}, {"DeepSeek-V3", "deepseek-v3"}};
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

TEST_CASE("a DeepSeek-V3 config picks its MoE layers as Hugging Face does, and needs a query latent", "[cli][hf]") {
  Scratch scratch;
  const std::string common =
      "\"architectures\": [\"DeepseekV3ForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 6,\n"
      " \"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"vocab_size\": 100,\n"
      " \"max_position_embeddings\": 128, \"intermediate_size\": 96, \"moe_intermediate_size\": 32,\n"
      " \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"n_shared_experts\": 1,\n"
      " \"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, \"v_head_dim\": 16,\n";
  // Layers from first_k_dense_replace on, every moe_layer_freq-th: 2 and 4 of 0-5.
  const std::string sparse = scratch.write(
      "sparse.json", "{" + common + " \"q_lora_rank\": 24, \"first_k_dense_replace\": 1, \"moe_layer_freq\": 2}\n");
  Outcome outcome = run_wafersim({"describe", "model", sparse});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.out.find("8 experts (top 2, 1 shared) of width 32 on 2 layers") != std::string::npos);
  CHECK(outcome.out.find("dense MLP width 96") != std::string::npos);
  CHECK(outcome.out.find("query latent 24") != std::string::npos);
  // DeepSeek-V2-Lite's form: queries without a latent, which the model spec does not have.
  const std::string no_query_latent =
      scratch.write("lite.json", "{" + common + " \"q_lora_rank\": null, \"first_k_dense_replace\": 1}\n");
  outcome = run_wafersim({"describe", "model", no_query_latent});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find(no_query_latent + ":6:") != std::string::npos);
  CHECK(outcome.err.find("'q_lora_rank'") != std::string::npos);
}

TEST_CASE("Gemma and Phi-2 configs give the parameters of their published weights", "[cli][hf]") {
  // The safetensors of google/gemma-7b, google/gemma-2b and microsoft/phi-2.
  const json gemma7 = describe(kHf + "gemma-7b/config.json");
  CHECK(gemma7["params_total"] == 8537680896ull);
  const json gemma2 = describe(kHf + "gemma-2b/config.json");
  CHECK(gemma2["params_total"] == 2506172416ull);
  const json phi2 = describe(kHf + "phi-2/config.json");
  CHECK(phi2["params_total"] == 2779683840ull);
  // Gemma ties its LM head to the embedding table (tie_word_embeddings is absent and
  // defaults to true): the table counts once, as the head. Phi-2's head is its own.
  CHECK(gemma7["params_active"] == gemma7["params_total"]);
  CHECK(phi2["params_active"] == phi2["params_total"].get<uint64_t>() - 51200ull * 2560ull);
}

TEST_CASE("Gemma gates its MLP with GELU", "[cli][hf]") {
  const std::string file = kHf + "gemma-7b/config.json";
  const json gemma = describe(file);
  CHECK(op_named(gemma, "layers.0.gate_proj").is_object());
  // The activation's cost is GeGLU's, not SwiGLU's: the reader picked model.mlp geglu.
  const json act = op_named(gemma, "layers.0.act");
  CHECK(act["flops"] == op_named(describe(file, {"model.mlp=geglu"}), "layers.0.act")["flops"]);
  CHECK(act["flops"] != op_named(describe(file, {"model.mlp=swiglu"}), "layers.0.act")["flops"]);
  // 16 heads of 256 are wider than the residual stream (3072): q_proj is 3072 x 4096.
  CHECK(op_named(gemma, "layers.0.q_proj")["output_shape"][1] == 4096);
}

TEST_CASE("Phi-2 runs a plain MLP beside attention from one LayerNorm, and rotates 40 % of each head", "[cli][hf]") {
  const std::string file = kHf + "phi-2/config.json";
  const json phi = describe(file);
  CHECK(op_named(phi, "layers.0.attn_norm").is_object());
  CHECK(op_named(phi, "layers.0.mlp_norm").is_null());  // the MLP reads the attention's input norm
  CHECK(op_named(phi, "layers.0.up_proj")["deps"] == op_named(phi, "layers.0.q_proj")["deps"]);
  CHECK(op_named(phi, "layers.0.gate_proj").is_null());  // fc1, GELU, fc2
  const json sequential = describe(file, {"model.parallel_residual=false"});
  CHECK(op_named(sequential, "layers.0.mlp_norm").is_object());
  // The compiler adds the attention branch to the stream's slices and normalises nothing after it.
  CHECK(op_named(phi, "layers.0.attn_residual")["steps"] == json::array({"attn_residual_slices"}));
  CHECK(op_named(sequential, "layers.0.attn_residual")["steps"] == json::array({"residual_norm_stats"}));
  // int(0.4 x 80) = 32 of each head's 80 elements turn.
  const json whole = describe(file, {"model.rotary_dim=0"});
  CHECK(op_named(phi, "layers.0.rotary")["flops"].get<uint64_t>() * 80 ==
        op_named(whole, "layers.0.rotary")["flops"].get<uint64_t>() * 32);
  // The LM head's bias: one FLOP and one weight per vocabulary entry.
  const json unbiased = describe(file, {"model.lm_head_bias=false"});
  CHECK(op_named(phi, "lm_head")["flops"].get<uint64_t>() ==
        op_named(unbiased, "lm_head")["flops"].get<uint64_t>() + 51200);
  CHECK(phi["params_total"].get<uint64_t>() == unbiased["params_total"].get<uint64_t>() + 51200);
}

TEST_CASE("a tiny Gemma and a tiny Phi config pass the functional check", "[cli][hf][functional]") {
  Scratch scratch;
  // Gemma's shape: heads wider than d_model / n_heads, one key/value head, GELU gates, tied head.
  const std::string gemma =
      scratch.write("gemma.json",
                    "{\"architectures\": [\"GemmaForCausalLM\"], \"head_dim\": 96, \"hidden_act\": \"gelu\",\n"
                    " \"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 128, \"intermediate_size\": 384,\n"
                    " \"max_position_embeddings\": 256, \"num_attention_heads\": 4, \"num_hidden_layers\": 2,\n"
                    " \"num_key_value_heads\": 1, \"vocab_size\": 512}\n");
  // Phi's: LayerNorm, attention and a plain GELU MLP side by side, biases, 40 % rotary, biased LM head.
  const std::string phi =
      scratch.write("phi.json",
                    "{\"architectures\": [\"PhiForCausalLM\"], \"hidden_act\": \"gelu_new\", \"hidden_size\": 160,\n"
                    " \"intermediate_size\": 640, \"max_position_embeddings\": 256, \"num_attention_heads\": 4,\n"
                    " \"num_hidden_layers\": 2, \"num_key_value_heads\": 4, \"partial_rotary_factor\": 0.4,\n"
                    " \"qk_layernorm\": false, \"tie_word_embeddings\": false, \"vocab_size\": 512}\n");
  for (const std::string& file : {gemma, phi})
    for (const char* dataflow : {"distributed", "root"}) {
      INFO(file << " " << dataflow);
      const json f = functional_check(file, dataflow);
      CHECK(f["passed"] == true);
      CHECK(f["tokens"] == 9);  // 6 prompt and 3 decoded positions
      CHECK(f["first_divergence"].is_null());
      CHECK(f["max_rel_error"].get<double>() > 0);  // the numbers were compared
    }
}

TEST_CASE("a config.json's partial_rotary_factor rotates int(factor x head_dim) elements of each head", "[cli][hf]") {
  Scratch scratch;
  const std::string published = read_text(kHf + "Phi-3-mini-4k-instruct/config.json");
  // Phi-3.5 and Phi-4-mini rotate three quarters of each head: 72 of 96 elements.
  const json three_quarters =
      describe(scratch.write("config.json", with_key(published, "partial_rotary_factor", "0.75")));
  const json whole = describe(kHf + "Phi-3-mini-4k-instruct/config.json");
  CHECK(op_named(three_quarters, "layers.0.rotary")["flops"].get<uint64_t>() * 96 ==
        op_named(whole, "layers.0.rotary")["flops"].get<uint64_t>() * 72);
  CHECK(three_quarters["params_total"] == whole["params_total"]);

  // What rotary cannot do is refused at the key: an odd number of elements, or a share outside (0, 1].
  for (const char* factor : {"0.33", "1.5", "0"}) {
    INFO(factor);
    const std::string file = scratch.write("bad.json", with_key(published, "partial_rotary_factor", factor));
    const Outcome outcome = run_wafersim({"describe", "model", file});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK(outcome.err.find(file + ":2:") != std::string::npos);
    CHECK_THAT(outcome.err, Catch::Contains("'partial_rotary_factor' '" + std::string(factor) + "'"));
  }
}

TEST_CASE("a Gemma or Phi config wafersim cannot model is one error naming the key", "[cli][hf]") {
  Scratch scratch;
  struct Case {
    std::string folder, key, value, message;
  };
  const std::vector<Case> cases = {
      {"gemma-7b", "hidden_activation", "\"gelu\"", "'hidden_activation' 'gelu'"},
      {"phi-2", "hidden_act", "\"relu\"", "'hidden_act' 'relu'"},
      {"phi-2", "qk_layernorm", "true", "'qk_layernorm' true"},
  };
  for (const Case& c : cases) {
    INFO(c.folder << " " << c.key);
    std::string text = read_text(kHf + c.folder + "/config.json");
    const std::string at = "\"" + c.key + "\": ";
    const size_t start = text.find(at) + at.size();
    text.replace(start, text.find(',', start) - start, c.value);
    const std::string file = scratch.write(c.folder + ".json", text);
    const Outcome outcome = run_wafersim({"describe", "model", file});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK(outcome.err.find(file + ":") != std::string::npos);
    CHECK_THAT(outcome.err, Catch::Contains(c.message));
  }
}
