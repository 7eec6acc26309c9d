// Vector (DSD) instructions of weight products (Work::vector_instructions):
// one multiply-add per input element and mapping.vector_instruction_elements
// outputs, each paying hardware.tile.vector_instruction_cycles.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mapping/steps.h"
#include "tests/mapping/mapping_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const std::set<std::string> kProjections = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};

struct ProjectionWork {
  uint64_t multiply_adds = 0, instructions = 0, tasks = 0, tasks_without_instructions = 0;
};

// Each projection step of layer 0 of `plan`, summed over its tiles' compute tasks.
std::map<std::string, ProjectionWork> projection_work(const mapping::Plan& plan) {
  std::map<std::string, ProjectionWork> work;
  for (const mapping::Region& region : plan.regions) {
    if (region.name != "layer 0") continue;
    const mapping::Block& block = region.blocks[0];
    for (const auto& step : block.steps) {
      if (!kProjections.count(step->label())) continue;
      ProjectionWork& w = work[step->label()];
      for (const Task& task : step_tasks(block, *step)) {
        if (task.op != TaskOp::Compute || task.category != Category::Compute || task.work.flops == 0) continue;
        w.multiply_adds += task.work.flops / 2;
        w.instructions += task.work.vector_instructions;
        ++w.tasks;
        if (task.work.vector_instructions == 0) ++w.tasks_without_instructions;
      }
    }
  }
  return work;
}

std::map<std::string, ProjectionWork> compiled(const std::vector<std::string>& overrides) {
  return projection_work(compile(load_experiment(experiment_path("tiny-dense"), overrides)));
}

}  // namespace

TEST_CASE("a block issues one instruction per input and run of outputs", "[mapping][vector]") {
  mapping::GemvShape shape;
  shape.d_in = 64;
  shape.d_out = 96;
  CHECK(shape.block_vector_instructions(10, 30, 0) == 10);   // one DSD covers a row
  CHECK(shape.block_vector_instructions(10, 30, 16) == 20);  // two 16-element runs per row
  CHECK(shape.block_vector_instructions(10, 32, 16) == 20);
  CHECK(shape.block_vector_instructions(10, 33, 16) == 30);
  CHECK(shape.block_vector_instructions(10, 30, 1) == 300);  // one per multiply-add
  CHECK(shape.block_vector_instructions(10, 0, 16) == 0);
  // A stored matrix of a quarter of the dense elements: a quarter of the instructions, rounded up.
  CHECK(shape.with_stored(64 * 96 / 4).block_vector_instructions(10, 30, 16) == 5);
}

TEST_CASE("every projection task counts its instructions as its block does", "[mapping][vector]") {
  // One element per instruction: as many instructions as multiply-adds.
  const auto single = compiled({"mapping.vector_instruction_elements=1"});
  REQUIRE(single.size() == kProjections.size());
  for (const auto& [label, w] : single) {
    INFO(label);
    CHECK(w.tasks > 0);
    CHECK(w.tasks_without_instructions == 0);
    CHECK(w.instructions == w.multiply_adds);
  }
  // Whole rows (the default) and 16-element runs: fewer, in that order.
  const auto rows = compiled({});
  const auto runs = compiled({"mapping.vector_instruction_elements=16"});
  for (const auto& [label, w] : rows) {
    INFO(label);
    CHECK(w.tasks_without_instructions == 0);
    CHECK(w.instructions < single.at(label).instructions);
    CHECK(w.instructions <= runs.at(label).instructions);
    CHECK(runs.at(label).instructions <= single.at(label).instructions);
  }
}

TEST_CASE("the instructions' cycles are on the decode's critical path, and only theirs", "[mapping][vector]") {
  const std::string text = zoo_experiment("llama3.2-1b", "wse3");
  auto cycles = [&](const std::vector<std::string>& overrides) {
    const Decoded decoded = decode_text(text, overrides);
    return decoded.timeline.finish.back().back();
  };
  const uint64_t preset = cycles({});
  CHECK(cycles({"hardware.tile.vector_instruction_cycles=0"}) < preset);
  CHECK(cycles({"hardware.tile.vector_instruction_cycles=14"}) > preset);
  // Without their cycles, how many instructions there are moves nothing.
  CHECK(cycles({"hardware.tile.vector_instruction_cycles=0", "mapping.vector_instruction_elements=1"}) ==
        cycles({"hardware.tile.vector_instruction_cycles=0"}));
}

TEST_CASE("grid attention issues one instruction per dimension and one per position, per query head",
          "[mapping][vector][grid]") {
  // tiny-dense: 4 query heads on 2 KV heads of 64 dimensions; one copy of each
  // KV head, so each group of 4 columns holds a head's 64 dimensions.
  const mapping::Plan plan =
      compile(load_experiment(experiment_path("tiny-dense"),
                              {"mapping.dataflow=distributed", "mapping.attention=grid", "mapping.kv_head_copies=1",
                               "mapping.layer_grid.columns=8", "mapping.layer_grid.rows=8"}));
  const uint64_t q_per_kv = 2, kv_heads = 2, head_dim = 64;
  size_t checked = 0;
  for (const mapping::Region& region : plan.regions) {
    if (region.name != "layer 0") continue;
    const mapping::Block& block = region.blocks[0];
    for (const auto& step : block.steps) {
      if (std::string(step->label()) != "attention") continue;
      for (uint32_t i = 0; i < block.geo.rows; ++i) {
        uint64_t per_token = 0, per_position = 0;
        for (uint32_t j = 0; j < block.geo.cols; ++j) {
          std::vector<Task> tasks;
          step->emit_tokens(i, j, tasks);
          for (const Task& task : tasks) {
            if (task.op != TaskOp::Compute) continue;
            per_token += task.work.vector_instructions;
            per_position += task.work_per_position.vector_instructions;
          }
        }
        INFO("row " << i);
        // Scores: one per dimension of every column (over its positions);
        // output: one per position held, on each of the 8 columns.
        CHECK(per_token == q_per_kv * kv_heads * head_dim);
        CHECK(per_position == q_per_kv * block.geo.cols);
        ++checked;
      }
    }
  }
  CHECK(checked == 8);
}
