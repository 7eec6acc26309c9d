#include "sim/cli/report/npy_read.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/reports/command_error.h"

namespace wafersim::cli {

namespace {

[[noreturn]] void not_an_array(const std::string& path, const std::string& why) {
  throw reports::CommandError(reports::kExitBadInput, path + ": not a .npy array of --heatmaps (" + why + ")");
}

// The text between `key`'s opening quote or parenthesis and `close`, in the header dict.
std::string dict_value(const std::string& dict, const std::string& key, char open, char close) {
  const size_t at = dict.find("'" + key + "':");
  if (at == std::string::npos) return "";
  const size_t begin = dict.find(open, at + key.size() + 3);
  const size_t end = begin == std::string::npos ? begin : dict.find(close, begin + 1);
  if (end == std::string::npos) return "";
  return dict.substr(begin + 1, end - begin - 1);
}

uint64_t little_endian(const std::string& bytes, size_t offset, size_t size) {
  uint64_t value = 0;
  for (size_t b = 0; b < size; ++b) value |= uint64_t(static_cast<unsigned char>(bytes[offset + b])) << (8 * b);
  return value;
}

}  // namespace

NpyGrid read_npy_grid(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw reports::CommandError(reports::kExitBadInput, path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  const size_t preamble = 10;  // magic (6), version (2), header length (2)
  if (bytes.size() < preamble || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1)
    not_an_array(path, "no NumPy 1.0 magic");
  const size_t data_offset = preamble + little_endian(bytes, 8, 2);
  if (data_offset > bytes.size()) not_an_array(path, "header longer than the file");
  const std::string dict = bytes.substr(preamble, data_offset - preamble);
  const std::string descr = dict_value(dict, "descr", '\'', '\'');
  if (dict_value(dict, "fortran_order", ' ', ',') != "False") not_an_array(path, "not in C order");
  NpyGrid grid;
  if (std::sscanf(dict_value(dict, "shape", '(', ')').c_str(), "%" SCNu64 ", %" SCNu64, &grid.height, &grid.width) != 2)
    not_an_array(path, "not two-dimensional");
  const size_t element = descr == "<i4" ? 4 : 8;
  if (descr != "<f8" && descr != "<u8" && descr != "<i4") not_an_array(path, "element type " + descr);
  const uint64_t count = grid.height * grid.width;
  if (bytes.size() - data_offset != count * element) not_an_array(path, "size does not match its shape");
  grid.values.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t bits = little_endian(bytes, data_offset + i * element, element);
    if (descr == "<f8")
      std::memcpy(&grid.values[i], &bits, sizeof(double));
    else if (descr == "<u8")
      grid.values[i] = double(bits);
    else
      grid.values[i] = double(int32_t(uint32_t(bits)));
  }
  return grid;
}

}  // namespace wafersim::cli
