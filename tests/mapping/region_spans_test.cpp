// The closed form times each region once per step of its span function
// (mapping/region_spans.h), relying on the span never shrinking as the context
// grows. Here every iteration's span from the table must equal the region's
// chain evaluated for that iteration directly: a step whose span could fall
// with more context, or a bisection that skips a change, fails here.
#include "mapping/region_spans.h"

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/mapping/mapping_fixture.h"
#include "workloads/decode_inputs.h"
#include "workloads/prefill_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// Returns the evaluations the tables needed, over all regions.
uint64_t require_table_matches_chain(const mapping::Plan& plan, const IterationInputs& inputs) {
  const mapping::PlanSpans spans(plan, inputs);
  bool some_table = false;
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const mapping::Region& region = plan.regions[r];
    const mapping::RegionSpans* spans_of_region = spans.of(r);
    REQUIRE((spans_of_region != nullptr) == (mapping::RegionSpans::tabulated_end(region) > 0));
    if (!spans_of_region) continue;
    some_table = true;
    for (uint64_t n = 0; n < plan.programs.iterations; ++n) {
      const mapping::RegionSpan direct =
          mapping::RegionSpans::evaluate(region, mapping::Timed{}, inputs, n, spans_of_region->end());
      const mapping::RegionSpan& table = spans_of_region->at(inputs.context(n));
      INFO(region.name << ", iteration " << n << ", context " << inputs.context(n));
      REQUIRE(table.out.latest().cycle == direct.out.latest().cycle);
      REQUIRE(table.out.latest().path == direct.out.latest().path);
      REQUIRE(table == direct);  // every root-column tile's figures too (the slices hand-off reads them)
    }
  }
  REQUIRE(some_table);
  return spans.evaluations();
}

}  // namespace

TEST_CASE("a region's span table equals its chain at every iteration", "[mapping][closed form]") {
  const std::vector<std::vector<std::string>> variants = {
      {"mapping.dataflow=distributed"},
      {"mapping.dataflow=root"},
      {"mapping.dataflow=distributed", "workload.batch=3"},
      {"mapping.kv_head_copies=2"},
      {"mapping.dataflow=distributed", "model.sliding_window=40", "model.sliding_window_every=2",
       "model.attention_sinks=true"},
      {"mapping.dataflow=root", "mapping.reduce_fanin=4", "model.sliding_window=40"},
  };
  for (const auto& overrides : variants) {
    std::string label;
    for (const std::string& o : overrides) label += o + " ";
    INFO(label);
    const Experiment experiment =
        load_experiment_text(zoo_experiment("tiny-dense", "tiny", 20, 120), "spans.yaml", overrides);
    const mapping::Plan plan = compile(experiment);
    require_table_matches_chain(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
    const mapping::Plan prefill = mapping::compile_prefill_plan(plan);
    require_table_matches_chain(prefill, workloads::PrefillInputs(prefill.workload));
  }
}

TEST_CASE("regions share a span table only when their chains time alike", "[mapping][closed form]") {
  // Layers with and without a sliding window, and MoE layers (tabled up to their dispatch).
  const Experiment windowed =
      load_experiment_text(zoo_experiment("tiny-dense", "tiny", 30, 60), "spans.yaml",
                           {"model.sliding_window=24", "model.sliding_window_every=3", "model.n_layers=6"});
  require_table_matches_chain(compile(windowed), workloads::DecodeInputs(windowed.model, windowed.workload));
  const Experiment moe = load_experiment_text(zoo_experiment("tiny-moe", "tiny", 30, 40), "spans.yaml", {});
  require_table_matches_chain(compile(moe), workloads::DecodeInputs(moe.model, moe.workload));
}

TEST_CASE("on a full WSE-3 the span table needs far fewer evaluations than iterations, one per piece or so",
          "[mapping][closed form]") {
  // Llama 3.1 8B with the context crossing thousands of positions: the span
  // changes only where the busiest attention tiles take one more position.
  const Experiment experiment =
      load_experiment_text(zoo_experiment("llama3.1-8b", "wse3", 100, 600), "spans.yaml", {"workload.prefill=false"});
  const mapping::Plan plan = compile(experiment);
  const uint64_t evaluations =
      require_table_matches_chain(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
  INFO(evaluations << " evaluations for " << plan.regions.size() << " regions and 600 iterations");
  REQUIRE(evaluations < plan.regions.size() * 600 / 100);
  // Each table evaluates its chain about once where the attention's output
  // changes (Step::context_starts), not by bisection, which takes about five
  // evaluations a piece here.
  const mapping::PlanSpans spans(plan, workloads::DecodeInputs(experiment.model, experiment.workload));
  std::set<const mapping::RegionSpans*> tables;
  for (size_t r = 0; r < plan.regions.size(); ++r)
    if (spans.of(r)) tables.insert(spans.of(r));
  for (const mapping::RegionSpans* table : tables) {
    INFO(table->evaluations() << " evaluations for " << table->starts().size() << " pieces");
    REQUIRE(table->evaluations() < 3 * table->starts().size());
  }
}
