// The closed form takes a known pass shifted in time wherever it provably
// repeats (mapping/timeline.h). Here it must equal the walk that passes every
// iteration through every region, cycle for cycle and critical path for
// critical path: a shortcut taken where the pipeline was not idle, or where a
// pass did not repeat, fails here.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/timeline.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Returns the full passes the shortcut walk needed, its tables' included.
uint64_t require_walks_agree(const mapping::Plan& plan, const IterationInputs& inputs) {
  const mapping::DecodeTimeline fast = mapping::analytic_timeline(plan, inputs, mapping::TimelineWalk::Shortcuts);
  const mapping::DecodeTimeline every = mapping::analytic_timeline(plan, inputs, mapping::TimelineWalk::EveryIteration);
  REQUIRE(every.full_passes == plan.programs.iterations);
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    INFO(plan.regions[r].name);
    REQUIRE(fast.start[r] == every.start[r]);
    REQUIRE(fast.finish[r] == every.finish[r]);
  }
  REQUIRE(fast.critical_path == every.critical_path);
  return fast.full_passes;
}

}  // namespace

TEST_CASE("the closed form's shortcuts equal a pass of every iteration", "[mapping][closed form]") {
  const std::vector<std::vector<std::string>> variants = {
      {"mapping.dataflow=distributed"},
      {"mapping.dataflow=root"},
      {"mapping.handoff=root"},
      {"mapping.kv_head_copies=2"},
      {"workload.batch=3"},
      {"workload.batch=3", "workload.prompt_tokens=[20, 35, 7]"},
      {"workload.batch=40", "workload.decode_tokens=6"},
      {"workload.batch=40", "workload.prompt_tokens=120", "workload.prefill_chunk_tokens=16"},
      {"workload.batch=8", "workload.decode_tokens=300"},
      {"workload.batch=5", "workload.prompt_tokens=[20, 35, 7, 90, 64]", "workload.decode_tokens=200",
       "workload.prefill_chunk_tokens=8"},
      {"workload.batch=4", "workload.decode_tokens=300", "model.sliding_window=40", "model.sliding_window_every=2"},
      {"workload.batch=6", "workload.decode_tokens=200", "hardware.wafers=2"},
      {"workload.batch=8", "workload.decode_tokens=200", "mapping.dataflow=root"},
      {"model.sliding_window=40", "model.sliding_window_every=2", "model.attention_sinks=true"},
      {"mapping.dataflow=root", "mapping.reduce_fanin=4", "workload.batch=5"},
  };
  for (const auto& overrides : variants) {
    std::string label;
    for (const std::string& o : overrides) label += o + " ";
    INFO(label);
    const Experiment experiment =
        load_experiment_text(zoo_experiment("tiny-dense", "tiny", 20, 120), "walk.yaml", overrides);
    const mapping::Plan plan = compile(experiment);
    require_walks_agree(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
    const mapping::Plan prefill = mapping::compile_prefill_plan(plan);
    require_walks_agree(prefill, workloads::PrefillInputs(prefill.workload));
  }
}

TEST_CASE("one sequence's routed passes are timed by parts, as every iteration times them", "[mapping][closed form]") {
  // (overrides, whether the parts cover the plan)
  const std::vector<std::pair<std::vector<std::string>, bool>> variants = {
      {{}, true},
      {{"model.moe.n_shared_experts=1"}, true},
      {{"model.n_layers=4", "model.ffn_dim=512", "model.moe.layers=[1, 3]"}, true},
      {{"model.n_layers=4", "hardware.wafers=2"}, true},
      {{"model.sliding_window=40", "model.sliding_window_every=2", "workload.decode_tokens=120"}, true},
      {{"mapping.moe_combine=tree"}, false},
      {{"mapping.moe_combine=root"}, false},
      {{"workload.batch=3"}, false},  // rounds of a batch: every iteration
  };
  for (const auto& [overrides, by_parts] : variants) {
    std::string label;
    for (const std::string& o : overrides) label += o + " ";
    INFO(label);
    const Experiment moe = load_experiment_text(zoo_experiment("tiny-moe", "tiny", 30, 40), "walk.yaml", overrides);
    const mapping::Plan plan = compile(moe);
    const uint64_t full = require_walks_agree(plan, workloads::DecodeInputs(moe.model, moe.workload));
    if (by_parts)
      REQUIRE(full == 0);
    else
      REQUIRE(full == plan.programs.iterations);
    // Its prefill in chunks of 4 tokens, every pass full, uses the head steps' memo as decode's passes do.
    std::vector<std::string> chunked = overrides;
    chunked.push_back("workload.prefill_chunk_tokens=4");
    const mapping::Plan prefill = mapping::compile_prefill_plan(
        compile(load_experiment_text(zoo_experiment("tiny-moe", "tiny", 30, 40), "walk.yaml", chunked)));
    REQUIRE(prefill.programs.iterations > 4);
    require_walks_agree(prefill, workloads::PrefillInputs(prefill.workload));
  }
}

TEST_CASE("gpt-oss-120b's routed passes on two WSE-3 wafers, ties and all, are timed by parts",
          "[mapping][closed form]") {
  // Parts of its layers tie with different critical paths (at the hand-off
  // between the wafers): each tie goes as the order of the tiles sends it.
  const Experiment experiment =
      load_experiment_text(zoo_experiment("gpt-oss-120b", "wse3", 4096, 1500), "walk.yaml", {"hardware.wafers=2"});
  const mapping::Plan plan = compile(experiment);
  REQUIRE(require_walks_agree(plan, workloads::DecodeInputs(experiment.model, experiment.workload)) == 0);
}

TEST_CASE("on a full WSE-3 the shortcuts pass far fewer iterations", "[mapping][closed form]") {
  // Llama 3.1 8B, one sequence over 3,000 tokens (each finds the pipeline
  // idle), and a batch of 100 (a saturated pipeline: once it has filled, each
  // token a step behind the one before).
  for (const std::string batch : {"1", "100"}) {
    INFO("batch " << batch);
    const uint64_t tokens = batch == "1" ? 3000 : 40;
    const Experiment experiment = load_experiment_text(zoo_experiment("llama3.1-8b", "wse3", 500, tokens), "walk.yaml",
                                                       {"workload.prefill=false", "workload.batch=" + batch});
    const mapping::Plan plan = compile(experiment);
    const uint64_t full_passes =
        require_walks_agree(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
    INFO(full_passes << " full passes of " << plan.programs.iterations << " iterations");
    REQUIRE(full_passes * (batch == "1" ? 10 : 3) < plan.programs.iterations);
  }
}

TEST_CASE("a small batch decoding in rounds passes few of its rounds", "[mapping][closed form]") {
  // Llama 3.1 8B on a full WSE-3, 8 sequences for 1,500 tokens: a round of
  // the batch repeats the one before, a step later, until some region's span
  // changes with the context; a repeat taken past that change differs here.
  const Experiment experiment = load_experiment_text(zoo_experiment("llama3.1-8b", "wse3", 500, 1500), "walk.yaml",
                                                     {"workload.prefill=false", "workload.batch=8"});
  const mapping::Plan plan = compile(experiment);
  const uint64_t full_passes =
      require_walks_agree(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
  INFO(full_passes << " full passes of " << plan.programs.iterations << " iterations");
  REQUIRE(full_passes * 10 < plan.programs.iterations);
}

TEST_CASE("a prefill of a batch passes few of its chunks", "[mapping][closed form]") {
  // Llama 3.1 8B on a full WSE-3, 800 prompts of 2,900 tokens in chunks of
  // at most 128 tokens (the tiles hold 42, 70 chunks a prompt): every chunk is there at cycle 0, so the regions run at
  // their own paces, and each time the chunks' context moves on, regions that had work queued drain it at a pace of
  // their own before the pipeline repeats (a walk that took a repeat past the drain differs here; with 400 prompts none
  // does).
  const Experiment experiment = load_experiment_text(zoo_experiment("llama3.1-8b", "wse3", 2900, 2), "walk.yaml",
                                                     {"workload.batch=800", "workload.prefill_chunk_tokens=128"});
  const mapping::Plan prefill = mapping::compile_prefill_plan(compile(experiment));
  const uint64_t full_passes = require_walks_agree(prefill, workloads::PrefillInputs(prefill.workload));
  INFO(full_passes << " full passes of " << prefill.programs.iterations << " chunks");
  REQUIRE(full_passes * 3 < prefill.programs.iterations);
}
