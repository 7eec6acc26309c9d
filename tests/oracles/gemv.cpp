#include "tests/oracles/gemv.h"

namespace wafersim::oracles {

Work gemv_block_work(uint64_t rows, uint64_t cols, Dtype weight_dtype, Dtype activation_dtype) {
  Work work;
  work.flops = 2 * rows * cols;
  work.read_bytes = dtype_bytes(weight_dtype, rows * cols) + dtype_bytes(activation_dtype, cols);
  work.write_bytes = dtype_bytes(activation_dtype, rows);
  return work;
}

Dtype gemv_arithmetic_dtype(Dtype weight_dtype, Dtype activation_dtype) {
  return dtype_compute_bits(weight_dtype) >= dtype_compute_bits(activation_dtype) ? weight_dtype : activation_dtype;
}

uint64_t gemv_block_cycles(const TileParams& tile, uint64_t rows, uint64_t cols, Dtype weight_dtype,
                           Dtype activation_dtype) {
  return compute_cycles(tile, gemv_arithmetic_dtype(weight_dtype, activation_dtype),
                        gemv_block_work(rows, cols, weight_dtype, activation_dtype));
}

}  // namespace wafersim::oracles
