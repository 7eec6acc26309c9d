// The prefill of an MoE layer gives every routed expert the load of a chunk's
// busiest expert, routed token by token as decode routes them. Here the load is
// recounted from the router directly: an even share, or a count that ignores a
// chunk's own tokens, fails.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/mapping/mapping_fixture.h"
#include "workloads/workload_spec.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Per chunk (sequence s, chunk k): the most tokens any expert of `layer` takes.
std::vector<uint32_t> busiest_per_chunk(const workloads::ModelSpec& m, const workloads::WorkloadSpec& w,
                                        uint32_t layer) {
  const workloads::ExpertRouter router(w.seed, m.moe.n_experts, m.moe.top_k);
  const uint64_t size = w.prefill_chunk_size();
  std::vector<uint32_t> busiest;
  for (uint32_t s = 0; s < w.batch; ++s)
    for (uint64_t first = 0; first < w.prompt(s); first += size) {
      std::vector<uint32_t> load(m.moe.n_experts, 0);
      for (uint64_t position = first; position < std::min(first + size, w.prompt(s)); ++position)
        for (uint32_t expert = 0; expert < m.moe.n_experts; ++expert)
          if (router.routed(s, position, layer, expert)) ++load[expert];
      busiest.push_back(*std::max_element(load.begin(), load.end()));
    }
  return busiest;
}

}  // namespace

TEST_CASE("an MoE prefill gives every routed expert the busiest expert's load", "[mapping][prefill][moe]") {
  const Experiment experiment = load_experiment_text(zoo_experiment("tiny-moe", "tiny", 100, 2), "moe.yaml",
                                                     {"workload.batch=2", "workload.prompt_tokens=[100, 40]",
                                                      "workload.prefill_chunk_tokens=32", "hardware.wafers=2"});
  const mapping::Plan prefill = mapping::compile_prefill_plan(compile(experiment));
  const workloads::ModelSpec& m = experiment.model;
  const uint32_t chunk = uint32_t(experiment.workload.prefill_chunk_size());
  const uint32_t even_share = (chunk * m.moe.top_k + m.moe.n_experts - 1) / m.moe.n_experts;
  size_t moe_layers = 0;
  for (const mapping::Region& region : prefill.regions) {
    if (region.kind != mapping::RegionKind::Moe) continue;
    ++moe_layers;
    const std::vector<uint32_t> busiest = busiest_per_chunk(m, experiment.workload, uint32_t(region.layer));
    REQUIRE(busiest.size() == prefill.programs.iterations);
    uint64_t sum = 0;
    for (uint32_t load : busiest) sum += load;
    const uint64_t expected = (sum + busiest.size() - 1) / busiest.size();
    INFO(region.name << ": chunk " << chunk << ", even share " << even_share << ", busiest mean " << expected);
    CHECK(expected > even_share);  // the routing of this seed is uneven: the test tells the two apart
    size_t routed = 0, shared = 0;
    for (const mapping::Block& block : region.blocks) {
      if (block.dispatch_bytes == 0) continue;  // the layer's own block
      if (block.expert >= 0) {
        ++routed;
        CHECK(block.tokens == expected);
      } else {
        ++shared;
        CHECK(block.tokens == chunk);
      }
    }
    CHECK(routed == m.moe.n_experts);
    CHECK(shared == m.moe.n_shared_experts);
  }
  CHECK(moe_layers == m.n_layers);
}

TEST_CASE("the prefill's last layer gathers only the chunk's last position, the one the LM head takes",
          "[mapping][prefill]") {
  // The root hand-off: every layer gathers its chunk to its root, the last one position only.
  const Experiment experiment = load_experiment_text(zoo_experiment("tiny-dense", "tiny", 100, 2), "dense.yaml",
                                                     {"workload.prefill_chunk_tokens=32", "mapping.handoff=root"});
  const mapping::Plan prefill = mapping::compile_prefill_plan(compile(experiment));
  const uint32_t chunk = prefill.tokens_per_iteration;  // the prompt in near-equal chunks of at most 32
  REQUIRE(chunk > 1);
  std::vector<uint32_t> gathered_tokens;  // per layer, the tokens its closing gather carries
  for (const mapping::Region& region : prefill.regions)
    for (const auto& step : region.blocks[0].steps)
      if (std::string(step->label()) == "gather_residual") gathered_tokens.push_back(step->env().tokens);
  REQUIRE(gathered_tokens.size() == experiment.model.n_layers);
  CHECK(gathered_tokens.front() == chunk);
  CHECK(gathered_tokens.back() == 1);
  // With the slices hand-off only the last layer gathers at all.
  const mapping::Plan slices = mapping::compile_prefill_plan(compile(load_experiment_text(
      zoo_experiment("tiny-dense", "tiny", 100, 2), "dense.yaml", {"workload.prefill_chunk_tokens=32"})));
  size_t gathers = 0;
  for (const mapping::Region& region : slices.regions)
    for (const auto& step : region.blocks[0].steps)
      if (std::string(step->label()) == "gather_residual") {
        ++gathers;
        CHECK(step->env().tokens == 1);
      }
  CHECK(gathers == 1);
}
