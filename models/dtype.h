#pragma once
// Number formats for weights, KV cache and activations.
#include <cstdint>
#include <string>

namespace wafersim {

enum class Dtype : uint8_t { FP32, FP16, BF16, FP8, INT8, INT4, MXFP4 };

// Storage cost per element in bits, including per-block scale overhead where the
// format has one (MXFP4: 4 bits + one 8-bit scale per 32 elements = 4.25 bits).
double dtype_bits(Dtype dtype);
// Bytes to store `elements` values, rounded up to whole bytes.
uint64_t dtype_bytes(Dtype dtype, uint64_t elements);
// Width of the arithmetic the tile uses for this format (32, 16 or 8); 4-bit
// formats are expanded to 8-bit before they are multiplied.
int dtype_compute_bits(Dtype dtype);

const char* to_string(Dtype dtype);
// Returns false for an unknown name.
bool parse_dtype(const std::string& name, Dtype* out);
// The names parse_dtype accepts, for enum declarations.
const char* const* dtype_names();  // null-terminated

}  // namespace wafersim
