#pragma once
// One tile's block of a matrix-vector product (MeshGEMV): y[rows] = W[rows x cols] x[cols].
#include <cstdint>

#include "models/cost.h"
#include "models/dtype.h"

namespace wafersim::oracles {

// 2 rows cols flops; reads the weight block and the input slice, writes the partial sums.
Work gemv_block_work(uint64_t rows, uint64_t cols, Dtype weight_dtype, Dtype activation_dtype);
// The dtype whose arithmetic rate a GEMV block runs at: the wider of the two
// (4-bit weights are expanded before they are multiplied).
Dtype gemv_arithmetic_dtype(Dtype weight_dtype, Dtype activation_dtype);
// compute_cycles of the block's work at that rate.
uint64_t gemv_block_cycles(const TileParams& tile, uint64_t rows, uint64_t cols, Dtype weight_dtype,
                           Dtype activation_dtype);

}  // namespace wafersim::oracles
