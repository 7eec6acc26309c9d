#include <catch2/catch.hpp>

#include "models/config/config.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

using namespace wafersim;
using namespace wafersim::workloads;

namespace {
config::Config load_workload(const std::string& yaml) {
  static const config::Schema schema{declare_workload_params};
  return config::load_string(schema, yaml, "workload.yaml", {});
}
}  // namespace

TEST_CASE("workload defaults match the WorkloadSpec defaults", "[workload][config]") {
  const WorkloadSpec read = workload_from_config(load_workload("workload: {}\n"));
  const WorkloadSpec spec;
  CHECK(read.batch == spec.batch);
  CHECK(read.prompt_tokens == spec.prompt_tokens);
  CHECK(read.decode_tokens == spec.decode_tokens);
  CHECK(read.seed == spec.seed);
}

TEST_CASE("workload values are read", "[workload][config]") {
  const WorkloadSpec w = workload_from_config(
      load_workload("workload:\n  batch: 8\n  prompt_tokens: 100\n  decode_tokens: 5\n  seed: 3\n"));
  CHECK(w.batch == 8);
  CHECK(w.prompt_tokens == 100);
  CHECK(w.decode_tokens == 5);
  CHECK(w.seed == 3);
  CHECK(w.max_context() == 105);
}

TEST_CASE("a zero batch is rejected at its line", "[workload][config]") {
  try {
    load_workload("workload:\n  batch: 0\n");
    FAIL("accepted batch 0");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()).find("workload.yaml:2:") != std::string::npos);
    CHECK(std::string(e.what()).find("workload.batch") != std::string::npos);
  }
}

TEST_CASE("a workload longer than the model's context is rejected", "[workload][config]") {
  const config::Config config = load_workload("workload:\n  prompt_tokens: 4000\n  decode_tokens: 200\n");
  ModelSpec model;
  model.max_positions = 4096;
  CHECK_THROWS_AS(check_workload_against_model(config, workload_from_config(config), model), config::ConfigError);
  model.max_positions = 4200;
  CHECK_NOTHROW(check_workload_against_model(config, workload_from_config(config), model));
}

TEST_CASE("prompt lengths may be given per sequence", "[workload][config]") {
  const WorkloadSpec w = workload_from_config(
      load_workload("workload:\n  batch: 3\n  prompt_tokens: [100, 20, 50]\n  prefill_chunk_tokens: 16\n"));
  CHECK(w.prompt_tokens == 100);  // the longest: what the KV cache must hold
  CHECK(w.prompt(1) == 20);
  CHECK(w.prompt_tokens_total() == 170);
  // Chunks of 15 tokens (100 in 7 chunks): 7, 2 and 4 chunks, taken in rounds.
  CHECK(w.prefill_chunk_size() == 15);
  CHECK(w.prefill_chunks(0) == 7);
  CHECK(w.prefill_chunks(1) == 2);
  CHECK(w.prefill_chunks(2) == 4);
  const std::vector<std::pair<uint32_t, uint64_t>> order = w.prefill_order();
  REQUIRE(order.size() == 13);
  CHECK(order[0] == std::make_pair(uint32_t(0), uint64_t(0)));
  CHECK(order[2] == std::make_pair(uint32_t(2), uint64_t(0)));
  CHECK(order[6] == std::make_pair(uint32_t(0), uint64_t(2)));  // sequence 1 has no third chunk
  CHECK(order.back() == std::make_pair(uint32_t(0), uint64_t(6)));
  // One number is every sequence's prompt.
  const WorkloadSpec same = workload_from_config(load_workload("workload:\n  batch: 3\n  prompt_tokens: 30\n"));
  CHECK(same.prompt_lengths.empty());
  CHECK(same.prompt(2) == 30);
  CHECK(same.prompt_tokens_total() == 90);
}

TEST_CASE("a list of prompt lengths must have one per sequence", "[workload][config]") {
  try {
    workload_from_config(load_workload("workload:\n  batch: 3\n  prompt_tokens: [100, 20]\n"));
    FAIL("accepted two prompts for three sequences");
  } catch (const config::ConfigError& e) {
    CHECK(std::string(e.what()).find("workload.yaml:3:") != std::string::npos);
    CHECK(std::string(e.what()).find("2 prompt length(s) for a batch of 3") != std::string::npos);
  }
}

TEST_CASE("a list of one prompt length is every sequence's, an empty list none", "[workload][config]") {
  const WorkloadSpec one = workload_from_config(load_workload("workload:\n  batch: 3\n  prompt_tokens: [40]\n"));
  CHECK(one.prompt_lengths.empty());
  CHECK(one.prompt(2) == 40);
  CHECK_THROWS_AS(workload_from_config(load_workload("workload:\n  batch: 3\n  prompt_tokens: []\n")),
                  config::ConfigError);
}
