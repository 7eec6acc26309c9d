#include <catch2/catch.hpp>

#include "tests/oracles/gemv.h"
#include "tests/oracles/messages.h"
#include "tests/oracles/reduce.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::oracles;

TEST_CASE("message closed forms from the wse3 figures", "[analytic]") {
  const HardwareSpec hw = testing::wse3_like();
  // ramp 2 + 10 hops + turn 1 + ceil(10 / 4) = 3 + ramp 2.
  CHECK(point_to_point_cycles(hw.fabric, -4, 6, 0, 10) == 18);
  CHECK(point_to_point_cycles(hw.fabric, 0, 6, 0, 10) == 13);
  CHECK(point_to_point_cycles(hw.fabric, 0, 6, 2, 10) == 73);  // two relays at 30 cycles
  CHECK(multicast_arrival_cycles(hw.fabric, 1, 0, 64) == 21);
  CHECK(multicast_last_cycles(hw.fabric, 761, 0, 64) == 781);
  CHECK(offwafer_cycles(hw, 137) == 2 + 1100 + 2 + 2);
}

TEST_CASE("tree reduce structure: receivers, members and distances", "[analytic][reduce]") {
  // Fan-in 4 over 10 tiles: level 0 groups {0,1,2,3} {4..7} {8,9}; level 1 {0,4,8}.
  CHECK(tree_levels(10, 4) == 2);
  CHECK(tree_receive_count(0, 0, 10, 4) == 3);
  CHECK(tree_receive_count(8, 0, 10, 4) == 1);
  CHECK(tree_receive_count(0, 1, 10, 4) == 2);
  CHECK(tree_receive_count(4, 1, 10, 4) == 0);
  CHECK(tree_send_hops(3, 0, 4) == 3);
  CHECK(tree_send_hops(8, 1, 4) == 8);
  CHECK(tree_send_hops(4, 0, 4) == 0);
  CHECK(tree_levels(1, 2) == 0);
}

TEST_CASE("reduce closed forms agree with each other and with a hand count", "[analytic][reduce]") {
  const HardwareSpec hw = testing::wse3_like();
  ReduceParams reduce;
  reduce.tiles = 16;
  reduce.bytes = 64;
  reduce.combine = {64, 128, 64};  // 8 + max(4, 8, 8) = 16 cycles per vector
  // Chain: 15 * (21 + 16).
  CHECK(chain_reduce_cycles(hw, reduce) == 15 * 37);
  // Fan-in 2, 4 levels: level l message of 2^l hops (20 + 2^l) and one combine (16).
  CHECK(full_tree_reduce_cycles(hw, reduce, 2) == (21 + 22 + 24 + 28) + 4 * 16);
  CHECK(tree_reduce_cycles(hw, reduce, 2) == full_tree_reduce_cycles(hw, reduce, 2));
  // Fan-in 4, 2 levels: 3 hops then 12 hops; combining 3 vectors: 8 + 24 = 32.
  CHECK(full_tree_reduce_cycles(hw, reduce, 4) == (23 + 32) + (32 + 32));
  CHECK(tree_reduce_cycles(hw, reduce, 4) == full_tree_reduce_cycles(hw, reduce, 4));
  reduce.tiles = 12;
  CHECK_THROWS(full_tree_reduce_cycles(hw, reduce, 4));
}

TEST_CASE("the HPDC'24 reduce estimate", "[analytic][reduce]") {
  Hpdc24Reduce r;
  r.contention_cycles = 100;
  r.element_hops = 4000;
  r.links = 10;
  r.distance_hops = 50;
  r.ramp_cycles = 2;
  r.depth = 3;
  CHECK(hpdc24_reduce_cycles(r) == Approx(450 + 5 * 3));
  r.contention_cycles = 1000;
  CHECK(hpdc24_reduce_cycles(r) == Approx(1000 + 15));
}

TEST_CASE("a GEMV block's work and cycles", "[analytic][gemv]") {
  const TileParams tile = testing::wse3_like().tile;
  const Work work = gemv_block_work(32, 16, Dtype::INT8, Dtype::FP16);
  CHECK(work.flops == 1024);
  CHECK(work.read_bytes == 512 + 32);
  CHECK(work.write_bytes == 64);
  CHECK(gemv_arithmetic_dtype(Dtype::INT8, Dtype::FP16) == Dtype::FP16);
  // 16-bit: 1024 / 16 = 64 cycles of math, 544 / 16 = 34 of reads: 8 + 64.
  CHECK(gemv_block_cycles(tile, 32, 16, Dtype::INT8, Dtype::FP16) == 72);
}
