// MeshGEMM projections of a prefill (mapping.prefill_gemm: meshgemm): the
// interleaved rings, the arithmetic of every projection against the chunked
// GEMV's and the GEMM's own count, a layer where its rings must be faster, and its
// vector instructions as WaferLLM's loop issues them.
#include "mapping/mesh_gemm.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "tests/mapping/mapping_fixture.h"
#include "workloads/op_costs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const std::set<std::string> kProjections = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};

// Prefill attention reads a context; the projections do not.
class Context : public IterationInputs {
 public:
  uint64_t context(uint64_t) const override { return 2048; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }
};

mapping::Plan prefill_plan(const std::string& text, std::vector<std::string> overrides, const std::string& gemm) {
  overrides.push_back("mapping.prefill_gemm=" + gemm);
  return mapping::compile_prefill_plan(compile(load_experiment_text(text, "exp.yaml", overrides)));
}

// Multiply-add flops of each projection step of `region`, summed over its tiles.
std::map<std::string, uint64_t> projection_flops(const mapping::Region& region) {
  std::map<std::string, uint64_t> flops;
  const mapping::Block& block = region.blocks[0];
  for (const auto& step : block.steps) {
    if (!kProjections.count(step->label())) continue;
    for (const Task& task : step_tasks(block, *step))
      if (task.op == TaskOp::Compute && task.category == Category::Compute) flops[step->label()] += task.work.flops;
  }
  return flops;
}

// Sends of the block root in step `label`, each checked to go at most 2 hops.
size_t root_sends(const mapping::Region& region, const std::string& label) {
  size_t sends = 0;
  for (const auto& step : region.blocks[0].steps) {
    if (step->label() != label) continue;
    std::vector<Task> tasks;
    step->emit_tokens(0, 0, tasks);
    for (const Task& task : tasks)
      if (task.op == TaskOp::Send) {
        ++sends;
        CHECK(std::abs(task.dx) + std::abs(task.dy) <= 2);
      }
  }
  return sends;
}

}  // namespace

TEST_CASE("an interleaved ring visits every tile of a line once, never more than 2 hops apart",
          "[mapping][prefill][meshgemm]") {
  for (uint32_t n = 1; n <= 33; ++n) {
    std::set<uint32_t> seen;
    uint32_t p = 0;
    for (uint32_t step = 0; step < n; ++step) {
      seen.insert(p);
      const uint32_t next = mapping::interleaved_ring_next(p, n);
      INFO("n " << n << ", from " << p << " to " << next);
      REQUIRE(next < n);
      CHECK((next > p ? next - p : p - next) <= 2);
      p = next;
    }
    CHECK(p == 0);  // back at the start after n steps
    CHECK(seen.size() == n);
  }
}

TEST_CASE("MeshGEMM does each projection's arithmetic exactly as the chunked GEMV does",
          "[mapping][prefill][meshgemm]") {
  const std::string text = zoo_experiment("tiny-dense", "tiny", 100, 2);
  const std::vector<std::string> overrides = {"workload.prefill_chunk_tokens=32", "mapping.dataflow=distributed",
                                              "model.qkv_bias=true"};
  const mapping::Plan mesh = prefill_plan(text, overrides, "meshgemm");
  const mapping::Plan gemv = prefill_plan(text, overrides, "chunked_gemv");
  const Experiment experiment = load_experiment_text(text, "exp.yaml", overrides);
  const workloads::ModelSpec& m = experiment.model;
  const uint64_t chunk = experiment.workload.prefill_chunk_size();
  REQUIRE(mesh.regions.size() == gemv.regions.size());
  size_t layers = 0;
  for (size_t r = 0; r < mesh.regions.size(); ++r) {
    if (mesh.regions[r].kind != mapping::RegionKind::Dense) continue;
    ++layers;
    const auto mesh_flops = projection_flops(mesh.regions[r]), gemv_flops = projection_flops(gemv.regions[r]);
    REQUIRE(mesh_flops.size() == kProjections.size());
    CHECK(mesh_flops == gemv_flops);
    // At least the GEMM's own multiply-adds: blocks round up, never down.
    const uint64_t qkv = uint64_t(m.n_heads + 2 * m.n_kv_heads) * m.head_dim;
    CHECK(mesh_flops.at("qkv_proj") >= chunk * workloads::matmul_flops(m.d_model, qkv, true));
    CHECK(mesh_flops.at("o_proj") >=
          chunk * workloads::matmul_flops(uint64_t(m.n_heads) * m.head_dim, m.d_model, false));
    CHECK(mesh_flops.at("down_proj") >= chunk * workloads::matmul_flops(m.ffn_dim, m.d_model, false));
    // The two algorithms differ: the block root of a chunked GEMV only receives
    // (the root of its trees), under MeshGEMM it shifts on both rings.
    CHECK(root_sends(mesh.regions[r], "qkv_proj") == 2);
    CHECK(root_sends(gemv.regions[r], "qkv_proj") == 0);
  }
  CHECK(layers == m.n_layers);
}

TEST_CASE("MeshGEMM's rings make a long chunk's layer faster than the chunked GEMV's trees, instructions aside",
          "[mapping][prefill][meshgemm]") {
  // Llama 3.1 8B's layer shapes on a 192 x 192 block, one chunk of 1,024 tokens:
  // the chunked GEMV's reduction trees carry every token's partial sums level
  // by level. Vector instructions are left out: MeshGEMM issues them as
  // WaferLLM's loop does (next test), many more than the chunked GEMV. Both
  // carry the one chunk as asked (its buffers do not fit 48 KB tiles): the
  // test compares timing.
  const std::string text = zoo_experiment("llama3.1-8b", "wse2", 1024, 1);
  std::vector<std::string> overrides = {"model.n_layers=1",
                                        "workload.prefill_chunk_tokens=1024",
                                        "mapping.prefill_chunk=as_asked",
                                        "mapping.layer_grid.columns=192",
                                        "mapping.layer_grid.rows=192",
                                        "mapping.dataflow=distributed"};
  const Context inputs;
  auto layer_cycles = [&](const mapping::Plan& plan) {
    for (const mapping::Region& region : plan.regions)
      if (region.kind == mapping::RegionKind::Dense) return region.finish({}, inputs, 0).cycle;
    FAIL("no dense layer");
    return uint64_t(0);
  };
  auto projection_cycles = [&](const mapping::Plan& plan) {
    uint64_t sum = 0;
    for (const mapping::Region& region : plan.regions)
      if (region.kind == mapping::RegionKind::Dense)
        for (const auto& [label, cycles] : region.step_cycles(inputs, 0))
          if (kProjections.count(label)) sum += cycles;
    return sum;
  };
  {
    const mapping::Plan mesh = prefill_plan(text, overrides, "meshgemm");
    const mapping::Plan gemv = prefill_plan(text, overrides, "chunked_gemv");
    REQUIRE(mesh.tokens_per_iteration == 1024);
    REQUIRE(gemv.tokens_per_iteration == 1024);
    INFO("with instructions: meshgemm " << projection_cycles(mesh) << " cycles, chunked_gemv "
                                        << projection_cycles(gemv) << " cycles of projections");
    CHECK(projection_cycles(mesh) > projection_cycles(gemv));
  }
  overrides.push_back("hardware.tile.vector_instruction_cycles=0");
  const mapping::Plan mesh = prefill_plan(text, overrides, "meshgemm");
  const mapping::Plan gemv = prefill_plan(text, overrides, "chunked_gemv");
  const uint64_t mesh_cycles = layer_cycles(mesh), gemv_cycles = layer_cycles(gemv);
  INFO("layer: meshgemm " << mesh_cycles << " cycles, chunked_gemv " << gemv_cycles << " cycles");
  INFO("projections: meshgemm " << projection_cycles(mesh) << " cycles, chunked_gemv " << projection_cycles(gemv)
                                << " cycles");
  CHECK(mesh_cycles < gemv_cycles);
  CHECK(projection_cycles(mesh) < projection_cycles(gemv));
}

TEST_CASE("MeshGEMM issues one instruction per weight element and round, as WaferLLM's loop does",
          "[mapping][prefill][meshgemm][vector]") {
  // A 12 x 12 block and a 96-token prompt in two 48-token chunks: 12 rounds of 4 tokens on every ring.
  const std::string text = zoo_experiment("tiny-dense", "tiny", 96, 2);
  auto per_tile = [&](const std::string& gemm, const std::string& elements) {
    const mapping::Plan plan = prefill_plan(
        text,
        {"workload.prefill_chunk_tokens=48", "mapping.dataflow=distributed", "mapping.layer_grid.columns=12",
         "mapping.layer_grid.rows=12", "mapping.vector_instruction_elements=" + elements},
        gemm);
    // {tile's multiply-adds, its instructions} of every tile of every projection of layer 0.
    std::vector<std::pair<uint64_t, uint64_t>> tiles;
    for (const mapping::Region& region : plan.regions) {
      if (region.name != "layer 0") continue;
      const mapping::Block& block = region.blocks[0];
      for (const auto& step : block.steps) {
        if (!kProjections.count(step->label())) continue;
        for (uint32_t i = 0; i < block.geo.rows; ++i)
          for (uint32_t j = 0; j < block.geo.cols; ++j) {
            std::vector<Task> tasks;
            step->emit_tokens(i, j, tasks);
            std::pair<uint64_t, uint64_t> tile{0, 0};
            for (const Task& task : tasks)
              if (task.op == TaskOp::Compute && task.category == Category::Compute) {
                tile.first += task.work.flops / 2;
                tile.second += task.work.vector_instructions;
              }
            if (tile.first > 0) tiles.push_back(tile);
          }
      }
    }
    REQUIRE(!tiles.empty());
    return tiles;
  };
  // One token per instruction: one per multiply-add. A whole round's block of
  // 4 tokens: a quarter of them. Runs of 3 tokens: two per weight and round.
  for (const auto& [multiply_adds, instructions] : per_tile("meshgemm", "1")) CHECK(instructions == multiply_adds);
  for (const auto& [multiply_adds, instructions] : per_tile("meshgemm", "0")) CHECK(4 * instructions == multiply_adds);
  for (const auto& [multiply_adds, instructions] : per_tile("meshgemm", "3")) CHECK(2 * instructions == multiply_adds);
  // The chunked GEMV runs its instructions over a block's outputs, token by
  // token: far fewer than MeshGEMM's here (blocks of 22-43 outputs, rounds of 4 tokens).
  const auto mesh = per_tile("meshgemm", "0"), gemv = per_tile("chunked_gemv", "0");
  uint64_t mesh_instructions = 0, gemv_instructions = 0;
  for (const auto& tile : mesh) mesh_instructions += tile.second;
  for (const auto& tile : gemv) gemv_instructions += tile.second;
  CHECK(gemv_instructions * 4 < mesh_instructions);
}
