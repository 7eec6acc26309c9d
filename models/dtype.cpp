#include "models/dtype.h"

namespace wafersim {

namespace {
const char* const kNames[] = {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "mxfp4", nullptr};
}

double dtype_bits(Dtype dtype) {
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

uint64_t dtype_bytes(Dtype dtype, uint64_t elements) {
  // In quarter bits every format's width is whole (at most 128), so the bytes
  // are exact in integers: cheaper than a double's rounding, which the
  // compiler pays for millions of tiles, and the same below 2^48 elements.
  const uint64_t quarter_bits = uint64_t(dtype_bits(dtype) * 4);
  if (elements < (uint64_t(1) << 56)) return (elements * quarter_bits + 31) / 32;
  return uint64_t(((unsigned __int128)elements * quarter_bits + 31) / 32);
}

int dtype_compute_bits(Dtype dtype) {
  switch (dtype) {
    case Dtype::FP32: return 32;
    case Dtype::FP16:
    case Dtype::BF16: return 16;
    default: return 8;
  }
}

const char* to_string(Dtype dtype) { return kNames[static_cast<int>(dtype)]; }

bool parse_dtype(const std::string& name, Dtype* out) {
  for (int i = 0; kNames[i]; ++i)
    if (name == kNames[i]) {
      *out = static_cast<Dtype>(i);
      return true;
    }
  return false;
}

const char* const* dtype_names() { return kNames; }

}  // namespace wafersim
