#include "sim/functional/numbers.h"

#include <cmath>
#include <cstring>

namespace wafersim::functional {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) from a hash.
double uniform(uint64_t h) { return double(h >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

float round_bf16(float value) {
  if (std::isnan(value)) return value;
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // to nearest, ties to even
  bits &= 0xffff0000u;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float round_fp16(float value) {
  if (!std::isfinite(value) || value == 0) return value;
  const double a = std::fabs(double(value));
  int exponent;
  std::frexp(a, &exponent);                                // a = m * 2^exponent, m in [0.5, 1)
  const int step_exponent = std::max(exponent - 11, -24);  // 11 significant bits; subnormals below 2^-14
  const double step = std::ldexp(1.0, step_exponent);
  double r = std::nearbyint(a / step) * step;  // the default rounding mode: to nearest, ties to even
  if (r > 65504.0) r = INFINITY;
  return float(value < 0 ? -r : r);
}

// MXFP4 (OCP microscaling): blocks of 32 elements along a row share a power
// of two scale; each element is an e2m1 number (0, 0.5, 1, 1.5, 2, 3, 4, 6).
constexpr uint32_t kMxBlock = 32;
float e2m1(float x) {
  static const float levels[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float a = std::min(std::fabs(x), 6.0f);
  float best = 0;
  for (float level : levels)
    if (std::fabs(a - level) < std::fabs(a - best)) best = level;  // ties keep the smaller (even) level
  return x < 0 ? -best : best;
}

}  // namespace

bool supported_dtype(Dtype dtype) { return dtype == Dtype::FP32 || dtype == Dtype::FP16 || dtype == Dtype::BF16; }
bool supported_weight_dtype(Dtype dtype) { return supported_dtype(dtype) || dtype == Dtype::MXFP4; }

float round_to(Dtype dtype, float value) {
  switch (dtype) {
    case Dtype::BF16: return round_bf16(value);
    case Dtype::FP16: return round_fp16(value);
    default: return value;
  }
}

double unit_roundoff(Dtype dtype) {
  switch (dtype) {
    case Dtype::BF16: return std::ldexp(1.0, -8);
    case Dtype::FP16: return std::ldexp(1.0, -11);
    default: return std::ldexp(1.0, -24);
  }
}

ModelWeights::ModelWeights(const workloads::ModelSpec& model, uint64_t seed) : model_(model), seed_(seed) {}

float ModelWeights::draw(Tensor tensor, int32_t layer, uint64_t row, uint64_t col, uint64_t salt,
                         int32_t expert) const {
  uint64_t h = mix(seed_ ^ mix(uint64_t(tensor) + 64 * uint64_t(int64_t(layer) + 1) + (salt << 40)));
  if (expert >= 0) h = mix(h ^ (uint64_t(expert) + 1));
  h = mix(h ^ row);
  h = mix(h ^ col);
  return float(uniform(h));
}

uint64_t ModelWeights::columns(Tensor tensor) const {
  switch (tensor) {
    case Tensor::O: return uint64_t(model_.n_heads) * model_.head_dim;
    case Tensor::Down: return model_.ffn_dim;
    case Tensor::ExpertDown: return model_.moe.expert_ffn_dim;
    default: return model_.d_model;
  }
}

float ModelWeights::matrix(Tensor tensor, int32_t layer, uint64_t row, uint64_t col, int32_t expert) const {
  if (tensor == Tensor::LmHead && model_.tied_embeddings) tensor = Tensor::Embedding, layer = -1;
  // Tables have unit entries; a projection keeps unit variance (uniform of variance 1/d_in).
  const bool table = tensor == Tensor::Embedding || tensor == Tensor::Positions;
  const double scale = table ? 1.0 : std::sqrt(3.0 / double(columns(tensor)));
  const bool in_expert = tensor == Tensor::ExpertGate || tensor == Tensor::ExpertUp || tensor == Tensor::ExpertDown;
  const Dtype dtype = in_expert ? model_.moe_weight_dtype : model_.weight_dtype;
  const float value = float(scale * draw(tensor, layer, row, col, 0, expert));
  if (dtype != Dtype::MXFP4) return round_to(dtype, value);
  // The block's shared scale: 2^(floor(log2(max |w|)) - 2), e2m1's largest exponent being 2.
  float largest = 0;
  const uint64_t first = col - col % kMxBlock;
  for (uint64_t c = first; c < std::min(first + kMxBlock, columns(tensor)); ++c)
    largest = std::max(largest, std::fabs(float(scale * draw(tensor, layer, row, c, 0, expert))));
  if (largest == 0) return 0;
  const float block_scale = std::ldexp(1.0f, int(std::floor(std::log2(largest))) - 2);
  return e2m1(value / block_scale) * block_scale;
}

bool ModelWeights::has_bias(Tensor tensor) const {
  switch (tensor) {
    case Tensor::Q:
    case Tensor::K:
    case Tensor::V: return model_.qkv_bias;
    case Tensor::O: return model_.o_bias;
    case Tensor::Gate:
    case Tensor::Up:
    case Tensor::Down:
    case Tensor::ExpertGate:
    case Tensor::ExpertUp:
    case Tensor::ExpertDown: return model_.mlp_bias;
    case Tensor::Router: return model_.moe.router_bias;
    case Tensor::LmHead: return model_.lm_head_bias;
    default: return false;
  }
}

float ModelWeights::bias(Tensor tensor, int32_t layer, uint64_t row, int32_t expert) const {
  if (!has_bias(tensor)) return 0;
  return round_to(model_.weight_dtype, float(0.1 * draw(tensor, layer, row, 0, 1, expert)));
}

float ModelWeights::norm(Tensor tensor, int32_t layer, uint64_t index, bool shift) const {
  const double u = draw(tensor, layer, index, 0, shift ? 3 : 2);
  return round_to(model_.weight_dtype, float(shift ? 0.1 * u : 1.0 + 0.1 * u));
}

float ModelWeights::sink(int32_t layer, uint32_t head) const {
  if (!model_.attention_sinks) return 0;
  // Scores q.k / sqrt(head_dim) are of order 1: a sink in [0, 2] takes a
  // visible share of the softmax at short contexts and a small one at long.
  return round_to(model_.weight_dtype, float(1.0 + draw(Tensor::Sinks, layer, head, 0, 4)));
}

uint32_t prompt_token(uint64_t seed, uint32_t sequence, uint64_t position, uint32_t vocab) {
  return uint32_t(mix(mix(seed ^ 0x70726f6d7074ull) ^ mix(sequence) ^ mix(position + 1)) % vocab);
}

}  // namespace wafersim::functional
