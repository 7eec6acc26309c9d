#pragma once
// GPU presets for the GPU reference (sim/gpu_reference/): the published figures
// of one data-centre GPU, each with the vendor page it comes from. A GPU is not
// a wafer: these figures are not a HardwareSpec and no wafer code reads them.
#include <cstdint>
#include <string>
#include <vector>

#include "models/dtype.h"

namespace wafersim {

// One GPU's datasheet figures. Tensor-core peaks are dense (no 2:4 sparsity).
struct GpuSpec {
  std::string name;  // "h100"
  std::string part;  // "H100 SXM5 80GB", the variant the figures are for
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double bf16_flops_per_s = 0;  // fp16 is the same on every preset here
  // 0: no tensor-core support for the format; the GPU multiplies it at the
  // next wider format it supports (fp4 -> fp8 -> bf16), as an upcasting kernel does.
  double fp8_flops_per_s = 0;
  double fp4_flops_per_s = 0;
  double nvlink_bytes_per_s = 0;  // per GPU, both directions together, as datasheets state it
  double tdp_watts = 0;
  std::string source;  // the datasheet: every figure above is from it unless `notes` says otherwise
  std::string notes;   // where a figure comes from elsewhere, or is read from a system total
};

// h100, b200, a100 (models/gpu.cpp, with their sources).
const std::vector<GpuSpec>& gpu_presets();

// Dense tensor-core peak for multiplying weights stored in `dtype` (fp32 at
// the 16-bit rate: the reference never sees fp32 weights in practice).
double gpu_peak_flops_per_s(const GpuSpec& gpu, Dtype dtype);

// `count` GPUs of one preset in one NVLink domain, tensor parallel.
struct GpuSystem {
  GpuSpec gpu;
  uint32_t count = 1;
  std::string label() const;  // "h100x8"
};

// Parses "b200x8", "h100x1", "a100x4" (count 1 to 72). Returns an empty
// string on success, otherwise a one-line reason naming what is accepted.
std::string parse_gpu_system(const std::string& text, GpuSystem* out);

}  // namespace wafersim
