#include "models/cost.h"

#include <catch2/catch.hpp>

#include "tests/sim/test_hardware.h"

using namespace wafersim;

TEST_CASE("compute cycles: overhead plus the slowest of math, reads and writes", "[cost]") {
  const TileParams tile = testing::wse3_like().tile;
  CHECK(compute_cycles(tile, Dtype::FP16, {160, 0, 0}) == 8 + 10);  // 8 FMAC = 16 flops/cycle
  CHECK(compute_cycles(tile, Dtype::FP32, {160, 0, 0}) == 8 + 40);  // 2 FMAC
  CHECK(compute_cycles(tile, Dtype::INT4, {160, 0, 0}) == 8 + 5);   // expanded to 8-bit: 16 FMAC
  CHECK(compute_cycles(tile, Dtype::FP16, {16, 1600, 0}) == 8 + 100);
  CHECK(compute_cycles(tile, Dtype::FP16, {16, 0, 81}) == 8 + 11);  // rounds up
  CHECK(compute_cycles(tile, Dtype::FP16, {}) == 8);
}

TEST_CASE("each vector instruction of a weight product adds its cycles to the math", "[cost]") {
  TileParams tile = testing::wse3_like().tile;
  REQUIRE(tile.vector_instruction_cycles == 7);
  CHECK(compute_cycles(tile, Dtype::FP16, {160, 0, 0, 3}) == 8 + 10 + 3 * 7);
  // The instructions lengthen the math, which may then pass the reads or not.
  CHECK(compute_cycles(tile, Dtype::FP16, {160, 480, 0, 1}) == 8 + 30);       // reads 30 > math 17
  CHECK(compute_cycles(tile, Dtype::FP16, {160, 480, 0, 4}) == 8 + 10 + 28);  // math 38 > reads 30
  tile.vector_instruction_cycles = 0;
  CHECK(compute_cycles(tile, Dtype::FP16, {160, 0, 0, 3}) == 8 + 10);
}

TEST_CASE("work adds and scales componentwise", "[cost]") {
  const Work sum = Work{1, 2, 3, 4} + Work{10, 20, 30, 40} * 2;
  CHECK(sum.flops == 21);
  CHECK(sum.read_bytes == 42);
  CHECK(sum.write_bytes == 63);
  CHECK(sum.vector_instructions == 84);
}

TEST_CASE("messages pay serialisation once", "[cost]") {
  const HardwareSpec hw = testing::wse3_like();
  CHECK(serialization_cycles(hw.fabric, 65) == 17);
  CHECK(message_cycles(hw.fabric, 100, 1, 0, 4) == 2 + 100 + 1 + 1 + 2);
  CHECK(offwafer_message_cycles(hw, 272) == 2 + 1100 + 2 + 2);
}

TEST_CASE("bytes of a format are the elements' bits rounded up to whole bytes", "[cost]") {
  const Dtype formats[] = {Dtype::FP32, Dtype::FP16, Dtype::BF16, Dtype::FP8, Dtype::INT8, Dtype::INT4, Dtype::MXFP4};
  // The rounding at every residue of a 32-element MXFP4 block, and large counts.
  std::vector<uint64_t> counts;
  for (uint64_t e = 0; e < 100; ++e) counts.push_back(e);
  for (uint64_t e :
       {uint64_t(1) << 20, uint64_t(1) << 40, (uint64_t(1) << 47) + 3, uint64_t(1) << 48, uint64_t(1) << 52})
    for (uint64_t d = 0; d < 33; ++d) counts.push_back(e + d);
  for (Dtype dtype : formats)
    for (uint64_t e : counts) {
      INFO(to_string(dtype) << ", " << e << " elements");
      // bits * e / 8, rounded up, in exact integer arithmetic (bits * 4 is whole).
      const unsigned __int128 quarter_bits = (unsigned __int128)(dtype_bits(dtype) * 4) * e;
      CHECK(dtype_bytes(dtype, e) == uint64_t((quarter_bits + 31) / 32));
    }
  CHECK(dtype_bytes(Dtype::MXFP4, 32) == 17);  // 32 four-bit elements and one 8-bit scale
  CHECK(dtype_bytes(Dtype::INT4, 3) == 2);
}
