#include "models/gpu.h"

#include <cctype>

namespace wafersim {

namespace {

constexpr double kGB = 1e9, kTB = 1e12, kTFLOPS = 1e12;

// Every figure is the vendor's. NVIDIA's datasheets give tensor-core peaks
// "with sparsity" (2:4 structured); the dense peak the reference uses is half
// of it, as the datasheets' footnotes say. docs/GPU_REFERENCE.md lists the
// same figures with the pages they were checked against.
std::vector<GpuSpec> make_presets() {
  std::vector<GpuSpec> presets;
  {
    GpuSpec g;
    g.name = "h100";
    g.part = "H100 SXM5 80GB";
    g.hbm_bytes = 80 * kGB;              // 80 GB HBM3
    g.hbm_bytes_per_s = 3.35 * kTB;      // 3.35 TB/s
    g.bf16_flops_per_s = 989 * kTFLOPS;  // 1,979 TFLOPS with sparsity
    g.fp8_flops_per_s = 1979 * kTFLOPS;  // 3,958 TFLOPS with sparsity
    g.fp4_flops_per_s = 0;               // Hopper has no fp4 tensor cores
    g.nvlink_bytes_per_s = 900 * kGB;    // NVLink 900 GB/s
    g.tdp_watts = 700;                   // "up to 700 W (configurable)"
    g.source = "https://www.nvidia.com/en-us/data-center/h100/ (H100 datasheet, SXM column)";
    presets.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "b200";
    g.part = "B200 in HGX B200 (1,000 W)";
    // The HGX B200 page states the 8-GPU board's totals; per GPU is an eighth.
    g.hbm_bytes = 180 * kGB;              // 1,440 GB HBM3e per 8 GPUs
    g.hbm_bytes_per_s = 8 * kTB;          // 64 TB/s per 8 GPUs
    g.bf16_flops_per_s = 2250 * kTFLOPS;  // 36 PFLOPS with sparsity per 8 GPUs
    g.fp8_flops_per_s = 4500 * kTFLOPS;   // 72 PFLOPS with sparsity per 8 GPUs
    g.fp4_flops_per_s = 9000 * kTFLOPS;   // 144 PFLOPS with sparsity per 8 GPUs
    g.nvlink_bytes_per_s = 1800 * kGB;    // NVLink 5: 1.8 TB/s per GPU
    g.tdp_watts = 1000;                   // HGX B200 configuration
    g.source = "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200 column)";
    g.notes = "per-GPU figures are the HGX B200 board's totals over its 8 GPUs";
    presets.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "a100";
    g.part = "A100 SXM4 80GB";
    g.hbm_bytes = 80 * kGB;              // 80 GB HBM2e
    g.hbm_bytes_per_s = 2.039 * kTB;     // 2,039 GB/s
    g.bf16_flops_per_s = 312 * kTFLOPS;  // 312 TFLOPS dense (624 with sparsity)
    g.fp8_flops_per_s = 0;               // Ampere has neither fp8 nor fp4 tensor cores
    g.fp4_flops_per_s = 0;
    g.nvlink_bytes_per_s = 600 * kGB;  // NVLink 600 GB/s
    g.tdp_watts = 400;                 // SXM4
    g.source =
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 80GB SXM column)";
    presets.push_back(g);
  }
  return presets;
}

}  // namespace

const std::vector<GpuSpec>& gpu_presets() {
  static const std::vector<GpuSpec> presets = make_presets();
  return presets;
}

double gpu_peak_flops_per_s(const GpuSpec& gpu, Dtype dtype) {
  const int bits = dtype_bits(dtype) < 8 ? 4 : dtype_bits(dtype) < 16 ? 8 : 16;
  if (bits == 4 && gpu.fp4_flops_per_s > 0) return gpu.fp4_flops_per_s;
  if (bits <= 8 && gpu.fp8_flops_per_s > 0) return gpu.fp8_flops_per_s;
  return gpu.bf16_flops_per_s;
}

std::string GpuSystem::label() const { return gpu.name + "x" + std::to_string(count); }

std::string parse_gpu_system(const std::string& text, GpuSystem* out) {
  std::string names;
  for (const GpuSpec& g : gpu_presets()) names += (names.empty() ? "" : ", ") + g.name + "xN";
  const std::string expected = "expected GPUxN with GPU one of " + names + " and N from 1 to 72, e.g. b200x8";
  const size_t x = text.rfind('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size())
    return "'" + text + "' is not a GPU system: " + expected;
  const std::string name = text.substr(0, x), digits = text.substr(x + 1);
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return "'" + text + "' has no GPU count: " + expected;
  if (digits.size() > 2 || std::stoul(digits) < 1 || std::stoul(digits) > 72)
    return "'" + text + "' asks for " + digits + " GPUs: " + expected;
  for (const GpuSpec& g : gpu_presets())
    if (g.name == name) {
      out->gpu = g;
      out->count = uint32_t(std::stoul(digits));
      return "";
    }
  return "'" + name + "' is not a GPU preset: " + expected;
}

}  // namespace wafersim
