#pragma once
// NumPy .npy files (format version 1.0), so users load the arrays with
// numpy.load and nothing else: a magic string, a Python dict literal giving the
// element type and shape, then the elements, little-endian, in C order.
#include <cstdint>
#include <string>
#include <vector>

namespace wafersim::cli {

// The bytes of a .npy file holding `values` as an array of `shape` (the product
// of shape must equal values.size(); std::logic_error otherwise).
std::string npy_bytes(const std::vector<double>& values, const std::vector<uint64_t>& shape);    // <f8
std::string npy_bytes(const std::vector<uint64_t>& values, const std::vector<uint64_t>& shape);  // <u8
std::string npy_bytes(const std::vector<int32_t>& values, const std::vector<uint64_t>& shape);   // <i4

}  // namespace wafersim::cli
