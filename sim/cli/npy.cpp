#include "sim/cli/npy.h"

#include <cstring>
#include <stdexcept>

namespace wafersim::cli {

namespace {

// The header dict, padded with spaces and ended by a newline so the data starts
// at a multiple of 64 bytes, as NumPy writes it.
std::string header(const char* descr, const std::vector<uint64_t>& shape, size_t count) {
  uint64_t product = 1;
  for (uint64_t extent : shape) product *= extent;
  if (product != count) throw std::logic_error("npy: the shape does not match the number of values");
  std::string dims;  // Python's tuple: "(3,)", "(2, 3)"
  for (size_t d = 0; d < shape.size(); ++d) dims += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1) dims += ",";
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t preamble = 10;  // magic (6), version (2), header length (2)
  const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(dict.size() & 0xff);
  out += char((dict.size() >> 8) & 0xff);
  return out + dict;
}

// Each value's bytes, least significant first, whatever the host's order.
template <typename Unsigned>
void append_little_endian(std::string& out, Unsigned bits) {
  for (size_t b = 0; b < sizeof(Unsigned); ++b) out += char((bits >> (8 * b)) & 0xff);
}

}  // namespace

std::string npy_bytes(const std::vector<double>& values, const std::vector<uint64_t>& shape) {
  std::string out = header("<f8", shape, values.size());
  out.reserve(out.size() + 8 * values.size());
  for (double value : values) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    append_little_endian(out, bits);
  }
  return out;
}

std::string npy_bytes(const std::vector<uint64_t>& values, const std::vector<uint64_t>& shape) {
  std::string out = header("<u8", shape, values.size());
  out.reserve(out.size() + 8 * values.size());
  for (uint64_t value : values) append_little_endian(out, value);
  return out;
}

std::string npy_bytes(const std::vector<int32_t>& values, const std::vector<uint64_t>& shape) {
  std::string out = header("<i4", shape, values.size());
  out.reserve(out.size() + 4 * values.size());
  for (int32_t value : values) append_little_endian(out, uint32_t(value));
  return out;
}

}  // namespace wafersim::cli
