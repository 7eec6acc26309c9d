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

TEST_CASE("work adds and scales componentwise", "[cost]") {
  const Work sum = Work{1, 2, 3} + Work{10, 20, 30} * 2;
  CHECK(sum.flops == 21);
  CHECK(sum.read_bytes == 42);
  CHECK(sum.write_bytes == 63);
}

TEST_CASE("messages pay serialisation once", "[cost]") {
  const HardwareSpec hw = testing::wse3_like();
  CHECK(serialization_cycles(hw.fabric, 65) == 17);
  CHECK(message_cycles(hw.fabric, 100, 1, 0, 4) == 2 + 100 + 1 + 1 + 2);
  CHECK(offwafer_message_cycles(hw, 272) == 2 + 1100 + 2 + 2);
}
