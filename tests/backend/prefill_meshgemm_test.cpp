// The prefill with MeshGEMM projections (mapping.prefill_gemm: meshgemm)
// through both backends: to the cycle with contention off, within 10 % with it
// on, in both orientations of the block and with the other GEMM algorithm for
// comparison. Each test case runs in its own process (SystemC elaborates once).
#include <catch2/catch.hpp>

#include "tests/backend/decode_fixture.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const std::string kMesh = "mapping.prefill_gemm=meshgemm";
// 100 prompt tokens in chunks of at most 16 through the distributed dataflow.
const std::vector<std::string> kChunks = {"workload.prompt_tokens=100", "workload.prefill_chunk_tokens=16",
                                          "mapping.dataflow=distributed"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("prefill, contention off: MeshGEMM projections agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles(mapping::Phase::Prefill, "tiny-dense", with(kChunks, {kMesh}));
}
TEST_CASE("prefill, contention off: MeshGEMM with biases, two sequences and one long chunk agree to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles(mapping::Phase::Prefill, "tiny-dense",
                      {"workload.prompt_tokens=[100, 37]", "workload.batch=2", "workload.prefill_chunk_tokens=100",
                       "mapping.dataflow=distributed", "model.qkv_bias=true", "model.mlp_bias=true", kMesh});
}
TEST_CASE("prefill, contention off: MeshGEMM with multicasts along y agrees to the cycle",
          "[regression][exact][prefill]") {
  require_same_cycles(mapping::Phase::Prefill, "tiny-dense", with(kChunks, {kMesh, "mapping.multicast_axis=y"}));
}
TEST_CASE("prefill, contention off: chunked GEMV projections agree to the cycle", "[regression][exact][prefill]") {
  require_same_cycles(mapping::Phase::Prefill, "tiny-dense", with(kChunks, {"mapping.prefill_gemm=chunked_gemv"}));
}
TEST_CASE("prefill, contention on: MeshGEMM projections within 10 percent", "[regression][contention][prefill]") {
  require_within_ten_percent(mapping::Phase::Prefill, "tiny-dense", with(kChunks, {kMesh, "workload.batch=2"}));
}
TEST_CASE("prefill, contention off: MeshGEMM whose ring shifts outlast its arithmetic agrees to the cycle",
          "[regression][exact][prefill]") {
  // Fast arithmetic, slow links: the rings' messages, not the compute, end each tile's rounds.
  // (No contention-on twin: links this slow make every step's traffic collide,
  // the chunked GEMV's as much as MeshGEMM's, about +25 % either way.)
  require_same_cycles(
      mapping::Phase::Prefill, "tiny-dense",
      with(kChunks, {kMesh, "hardware.tile.fmac_per_cycle_16bit=64", "hardware.tile.sram_read_bytes_per_cycle=256",
                     "hardware.tile.sram_write_bytes_per_cycle=256", "hardware.fabric.link_bytes_per_cycle=1"}));
}
