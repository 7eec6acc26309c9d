#include "models/dtype.h"

namespace wafersim {

namespace {
const char* const kNames[] = {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "mxfp4", nullptr};
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
