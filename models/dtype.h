#pragma once
// Number formats for weights, KV cache and activations.
#include <cstdint>
#include <string>

namespace wafersim {

enum class Dtype : uint8_t { FP32, FP16, BF16, FP8, INT8, INT4, MXFP4 };

// Storage cost per element in bits, including per-block scale overhead where the
// format has one (MXFP4: 4 bits + one 8-bit scale per 32 elements = 4.25 bits).
inline double dtype_bits(Dtype dtype) {
  switch (dtype) {
    case Dtype::FP32: return 32;
    case Dtype::FP16:
    case Dtype::BF16: return 16;
    case Dtype::FP8:
    case Dtype::INT8: return 8;
    case Dtype::INT4: return 4;
    case Dtype::MXFP4: return 4.25;  // 4-bit elements + one 8-bit shared scale per 32
  }
  return 0;
}

// Bytes to store `elements` values, rounded up to whole bytes. In quarter bits
// every format's width is whole (at most 128), so the bytes are exact in
// integers; inline, as the compiler sizes millions of tiles with it.
inline uint64_t dtype_bytes(Dtype dtype, uint64_t elements) {
  const uint64_t quarter_bits = uint64_t(dtype_bits(dtype) * 4);
  if (elements < (uint64_t(1) << 56)) return (elements * quarter_bits + 31) / 32;
  return uint64_t(((unsigned __int128)elements * quarter_bits + 31) / 32);
}
// Width of the arithmetic the tile uses for this format (32, 16 or 8); 4-bit
// formats are expanded to 8-bit before they are multiplied.
int dtype_compute_bits(Dtype dtype);

const char* to_string(Dtype dtype);
// Returns false for an unknown name.
bool parse_dtype(const std::string& name, Dtype* out);
// The names parse_dtype accepts, for enum declarations.
const char* const* dtype_names();  // null-terminated

}  // namespace wafersim
