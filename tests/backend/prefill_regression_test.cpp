// The prefill plan through both backends, as the decode regression suite does:
// to the cycle with contention off, within 10 % with it on. Each test case runs
// in its own process (SystemC elaborates once).
#include <catch2/catch.hpp>

#include "tests/backend/decode_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

void require_same_cycles(const std::string& experiment, const std::vector<std::string>& overrides) {
  testing::require_same_cycles(mapping::Phase::Prefill, experiment, overrides);
}
void require_within_ten_percent(const std::string& experiment, const std::vector<std::string>& overrides) {
  testing::require_within_ten_percent(mapping::Phase::Prefill, experiment, overrides);
}

const std::string kRoot = "mapping.dataflow=root";
const std::string kDistributed = "mapping.dataflow=distributed";
// 100 prompt tokens in chunks of at most 16: 7 chunks of 15 tokens (5 padded).
const std::vector<std::string> kChunks = {"workload.prompt_tokens=100", "workload.prefill_chunk_tokens=16"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("prefill, contention off: root dataflow, chunks of two layers agree to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kRoot}));
}
TEST_CASE("prefill, contention off: distributed dataflow, chunks of two layers agree to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed}));
}
// Chunks handed on as slices (the default) re-cut between layers of different heights along x.
TEST_CASE("prefill, contention off: slices hand-off along x agrees to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "mapping.multicast_axis=x", "workload.batch=2"}));
}
// Lines along rows, and a context (the decode's tokens) for which the two
// strips' layers are of one height: the turn between the strips hands a chunk
// on along the row both lines lie on, each piece sidestepping.
TEST_CASE("prefill, contention off: slices hand-off along the row of both lines agrees to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense",
                      with(kChunks, {kDistributed, "mapping.multicast_axis=y", "workload.decode_tokens=2900"}));
}
TEST_CASE("prefill, contention off: root hand-off agrees to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "mapping.handoff=root"}));
}
TEST_CASE("prefill, contention off: four copies of two KV heads agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "model.n_heads=8", "model.head_dim=32",
                                                   "model.n_kv_heads=2", "mapping.kv_head_copies=4"}));
}
TEST_CASE("prefill, contention off: latent attention, dense and MoE layers, agrees to the cycle",
          "[regression][exact][prefill][mla]") {
  require_same_cycles("tiny-mla", kChunks);
}
TEST_CASE("prefill, contention off: chunks of three sequences agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "workload.batch=3"}));
}
TEST_CASE("prefill, contention off: two wafers agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "hardware.wafers=2"}));
}
TEST_CASE("prefill, contention off: sliding windows, sinks and biases agree to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-dense",
                      with(kChunks, {kDistributed, "model.sliding_window=32", "model.sliding_window_every=2",
                                     "model.attention_sinks=true", "model.qkv_bias=true", "model.n_kv_heads=4"}));
}
TEST_CASE("prefill, contention off: MoE layers on two wafers agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-moe", with(kChunks, {"workload.batch=2"}));
}
TEST_CASE("prefill, contention off: MoE results to the layer root agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles("tiny-moe", with(kChunks, {"mapping.moe_combine=root", "model.moe.n_shared_experts=1"}));
}
TEST_CASE("prefill, contention off: MoE column chains with a shared expert agree to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-moe", with(kChunks, {"model.moe.n_shared_experts=1", "workload.batch=3"}));
}
TEST_CASE("prefill, contention off: MoE combining tree with a shared expert agrees to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles("tiny-moe", with(kChunks, {"mapping.moe_combine=tree", "model.moe.n_shared_experts=1"}));
}
TEST_CASE("prefill, contention off: grid attention agrees to the cycle", "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "mapping.attention=grid", "model.n_kv_heads=1"}));
}
TEST_CASE("prefill, contention off: grid attention with MeshGEMM projections agrees to the cycle",
          "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-dense",
                      with(kChunks, {kDistributed, "mapping.attention=grid", "mapping.prefill_gemm=meshgemm"}));
}
// mapping.prefill_attention: grid under decode's groups: the slices' ring
// exchanges around attention and every row's KV move to decode's groups.
const std::string kGridPrefill = "mapping.prefill_attention=grid";
TEST_CASE("prefill, contention off: a grid prefill under decode's groups agrees to the cycle",
          "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-dense", with(kChunks, {kGridPrefill, "mapping.prefill_gemm=meshgemm"}));
}
TEST_CASE("prefill, contention off: a grid prefill into four copies of two KV heads agrees to the cycle",
          "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-dense", with(kChunks, {kGridPrefill, "model.n_heads=8", "model.head_dim=32",
                                                   "model.n_kv_heads=2", "mapping.kv_head_copies=4"}));
}
TEST_CASE("prefill, contention off: a grid prefill with windows and sinks on two wafers agrees to the cycle",
          "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-dense", with(kChunks, {kGridPrefill, "hardware.wafers=2", "model.sliding_window=32",
                                                   "model.sliding_window_every=2", "model.attention_sinks=true"}));
}
TEST_CASE("prefill, contention off: a grid prefill of MoE layers agrees to the cycle",
          "[regression][exact][prefill][grid]") {
  require_same_cycles("tiny-moe", with(kChunks, {kGridPrefill}));
}
TEST_CASE("prefill, contention on: a grid prefill under decode's groups within 10 percent",
          "[regression][contention][prefill][grid]") {
  require_within_ten_percent("tiny-dense", with(kChunks, {kGridPrefill, "mapping.prefill_gemm=meshgemm"}));
}
TEST_CASE("prefill, contention on: distributed dataflow within 10 percent", "[regression][contention][prefill]") {
  require_within_ten_percent("tiny-dense", with(kChunks, {kDistributed}));
}
TEST_CASE("prefill, contention on: MoE layers within 10 percent", "[regression][contention][prefill]") {
  require_within_ten_percent("tiny-moe", kChunks);
}
TEST_CASE("prefill, contention on: root dataflow, batch of two within 10 percent",
          "[regression][contention][prefill]") {
  require_within_ten_percent("tiny-dense", with(kChunks, {kRoot, "workload.batch=2"}));
}
TEST_CASE("prefill, contention off: prompts of different lengths agree to the cycle", "[regression][exact][prefill]") {
  // Chunks of 16 for the 100-token prompt: 7, 2 and 4 chunks, in rounds.
  require_same_cycles("tiny-dense", {"workload.prompt_tokens=[100, 20, 50]", "workload.batch=3",
                                     "workload.prefill_chunk_tokens=16", kDistributed});
}
TEST_CASE("decode, contention off: prompts of different lengths agree to the cycle", "[regression][exact][prefill]") {
  testing::require_same_cycles(mapping::Phase::Decode, "tiny-dense",
                               {"workload.prompt_tokens=[100, 20]", "workload.batch=2", kRoot});
}

// mapping.line_root: middle in a prefill: chunk-sized streams into both sides of every line's middle root.
TEST_CASE("prefill, contention off: middle roots, two wafers and slices hand-offs agree to the cycle",
          "[regression][exact][prefill][middle]") {
  require_same_cycles(
      "tiny-dense", with(kChunks, {kDistributed, "mapping.line_root=middle", "hardware.wafers=2", "workload.batch=2"}));
}
TEST_CASE("prefill, contention off: middle roots with MeshGEMM projections along y agree to the cycle",
          "[regression][exact][prefill][middle]") {
  require_same_cycles("tiny-dense", with(kChunks, {kDistributed, "mapping.line_root=middle",
                                                   "mapping.prefill_gemm=meshgemm", "mapping.multicast_axis=y"}));
}
TEST_CASE("prefill, contention off: middle roots with latent attention, dense and MoE layers, agree to the cycle",
          "[regression][exact][prefill][middle]") {
  require_same_cycles("tiny-mla", with(kChunks, {"mapping.line_root=middle"}));
}
