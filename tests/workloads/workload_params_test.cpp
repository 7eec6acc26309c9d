#include <catch2/catch.hpp>

#include "models/config/config.h"
#include "workloads/model_spec.h"
#include "workloads/workload_spec.h"

using namespace wafersim;
using namespace wafersim::workloads;

namespace {
config::Config load_workload(const std::string& yaml) {
  static const config::Schema schema = [] {
    config::Schema s;
    declare_workload_params(s);
    return s;
  }();
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
