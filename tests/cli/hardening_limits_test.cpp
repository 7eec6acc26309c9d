// Valid experiments at the edges of the compiler and of time: each is placed or
// refused with exit 2 or 3 and one line, never an internal error or a hang.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

namespace {

const std::string kData = WAFERSIM_TEST_DATA;

Outcome map_with(const std::string& experiment, const std::vector<std::string>& sets) {
  std::vector<std::string> args = {"map", kData + "/" + experiment, "--quiet"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  return run_wafersim(args);
}

// Placed (exit 0) or refused as not fitting (exit 3, one line naming the reason).
void check_placed_or_refused(const Outcome& outcome) {
  INFO(outcome.err);
  CHECK((outcome.exit_code == 0 || outcome.exit_code == 3));
  if (outcome.exit_code == 3) {
    CHECK(is_one_line(outcome.err));
    CHECK(outcome.err.rfind("does not fit: ", 0) == 0);
  }
}

}  // namespace

TEST_CASE("narrow strips on the tiny wafer are refused with what would fit", "[cli][limits]") {
  const Outcome outcome = map_with("good/tiny.yaml", {"mapping.strips=8"});
  check_placed_or_refused(outcome);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("with mapping.strips: 0 it fits on") != std::string::npos);
}

TEST_CASE("more strips than the wafer has columns is a bad value at its line", "[cli][limits]") {
  const Outcome outcome = map_with("good/tiny.yaml", {"mapping.strips=17"});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("--set mapping.strips=17") != std::string::npos);
}

TEST_CASE("MoE knobs on tiny-moe are placed or refused, never an internal error", "[cli][limits]") {
  for (const char* set : {"mapping.moe_attention_share=0.8", "mapping.use_all_tiles=false", "model.moe.n_experts=17",
                          "model.moe.n_experts=31", "mapping.strips=4"}) {
    INFO(set);
    check_placed_or_refused(map_with("experiments/tiny-moe.yaml", {set}));
  }
}

TEST_CASE("one layer whose buffers outgrow a WSE-3 at every strip width is refused", "[cli][limits]") {
  // Its 36.6 GB fit the wafer's 40.3 GB, but the activation buffers do not fit beside the weights, even with the
  // tiles that keep the most buffers relieved of weights.
  const Outcome outcome =
      map_with("good/tiny.yaml", {"hardware=wse3", "model.d_model=16384", "model.ffn_dim=360448", "model.n_layers=1",
                                  "model.n_heads=128", "model.n_kv_heads=8", "model.head_dim=128"});
  check_placed_or_refused(outcome);
  CHECK(outcome.exit_code == 3);
  CHECK_THAT(outcome.err, Catch::Contains("more wafers do not help"));
}

TEST_CASE("a model needing more than 1024 wafers is refused", "[cli][limits]") {
  // Every layer needs most of a tiny wafer: 1100 layers need 1100 wafers.
  const Outcome outcome = map_with("experiments/tiny-dense.yaml", {"model.n_layers=1100", "model.d_model=512",
                                                                   "model.ffn_dim=2048", "model.n_heads=8"});
  check_placed_or_refused(outcome);
  CHECK(outcome.exit_code == 3);
  CHECK(outcome.err.find("more than the 1024") != std::string::npos);
}

TEST_CASE("run refuses a decode past SystemC's time limit before simulating", "[cli][limits]") {
  // Six off-wafer hops of 1e12 cycles per token: 4,000 tokens take 2.4e16 cycles, past SystemC's 1.8e16.
  const std::vector<std::string> args = {kData + "/experiments/tiny-dense.yaml",
                                         "--quiet",
                                         "--set",
                                         "hardware.wafers=8",
                                         "--set",
                                         "model.n_layers=6",
                                         "--set",
                                         "hardware.offwafer.latency_cycles=1000000000000",
                                         "--set",
                                         "workload.decode_tokens=4000"};
  std::vector<std::string> run = {"run"}, analytic = {"analytic"};
  run.insert(run.end(), args.begin(), args.end());
  analytic.insert(analytic.end(), args.begin(), args.end());
  const Outcome outcome = run_wafersim(run);
  INFO(outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("SystemC can simulate") != std::string::npos);
  CHECK(outcome.err.find("--set workload.decode_tokens=4000") != std::string::npos);
  // The closed form counts in 64 bits and evaluates it.
  CHECK(run_wafersim(analytic).exit_code == 0);
}

// The sanitizer's shadow memory needs far more address space than any such limit allows.
#ifndef __SANITIZE_ADDRESS__
namespace {

// `command` of Llama 3.1 8B on `wafers` WSE-3 wafers under an address-space
// limit of `kilobytes`: refused with exit 3 and one line, which is returned.
std::string refused_under_memory_limit(const std::string& command, uint32_t wafers, uint64_t kilobytes) {
  const Outcome outcome = run_shell("ulimit -v " + std::to_string(kilobytes) + "; " + shell_quoted(WAFERSIM_BINARY) +
                                    " " + command + " " + shell_quoted(kData + "/good/tiny.yaml") +
                                    " --quiet --set hardware=wse3 --set hardware.wafers=" + std::to_string(wafers) +
                                    " --set model=llama3.1-8b");
  INFO(outcome.err);
  CHECK(outcome.exit_code == 3);
  CHECK(is_one_line(outcome.err));
  return outcome.err;
}

}  // namespace

TEST_CASE("a plan larger than the memory left is refused before compiling, naming the memory", "[cli][limits]") {
  // 1,000 WSE-3 wafers: 896 million tiles, 7.17 GB of per-tile tables, under a 3 GB address-space limit.
  CHECK_THAT(refused_under_memory_limit("map", 1000, 3000000),
             Catch::Contains("the plan's per-tile tables need 7.17 GB"));
}

TEST_CASE("a mesh larger than the memory left is refused before the simulation, with exit 3", "[cli][limits]") {
  // Four WSE-3 wafers: 3.6 million tiles of engine state, about 1.7 GB, under a 1.5 GB address-space limit.
  // The prefill runs first, in a child process: its refusal must reach the command with its exit code.
  CHECK_THAT(refused_under_memory_limit("run", 4, 1500000), Catch::Contains("engine's tile state"));
}
#endif
