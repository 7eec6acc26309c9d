#include "sim/functional/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

namespace wafersim::functional {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using workloads::ModelSpec;

uint64_t qkv_size(const ModelSpec& m) { return uint64_t(m.n_heads + 2 * m.n_kv_heads) * m.head_dim; }
uint64_t gate_up_size(const ModelSpec& m) { return (workloads::gated(m.mlp) ? 2 : 1) * uint64_t(m.ffn_dim); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double gated_activation(const ModelSpec& m, double gate, double up) {
  return (m.mlp == workloads::MlpKind::GeGLU ? gelu(gate) : silu(gate)) * up;
}
float activation(const ModelSpec& m, float gate, float up) {
  return workloads::gated(m.mlp) ? float(gated_activation(m, gate, up)) : float(gelu(up));
}

std::vector<std::pair<uint32_t, double>> pick_experts(const std::vector<double>& logits, uint32_t top_k) {
  std::vector<uint32_t> order(logits.size());
  for (uint32_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return logits[a] > logits[b]; });
  order.resize(std::min<size_t>(top_k, order.size()));
  return weigh_experts(logits, order);
}

std::vector<std::pair<uint32_t, double>> weigh_experts(const std::vector<double>& logits,
                                                       const std::vector<uint32_t>& experts) {
  double top = -INFINITY, sum = 0;
  for (uint32_t e : experts) top = std::max(top, logits[e]);
  std::vector<std::pair<uint32_t, double>> picked;
  for (uint32_t e : experts) picked.emplace_back(e, std::exp(logits[e] - top)), sum += picked.back().second;
  for (auto& [e, weight] : picked) weight /= sum;
  return picked;
}

namespace {

std::vector<double> to_std(const VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); }

MatrixXd matrix_of(const ModelWeights& w, Tensor tensor, int32_t layer, uint64_t rows, int32_t expert = -1) {
  MatrixXd out(rows, w.columns(tensor));
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < w.columns(tensor); ++c) out(long(r), long(c)) = w.matrix(tensor, layer, r, c, expert);
  return out;
}
VectorXd bias_of(const ModelWeights& w, Tensor tensor, int32_t layer, uint64_t rows, int32_t expert = -1) {
  VectorXd out(rows);
  for (uint64_t r = 0; r < rows; ++r) out(long(r)) = w.bias(tensor, layer, r, expert);
  return out;
}

// One feed-forward network: up (and gate), activation, down.
struct Ffn {
  MatrixXd gate, up, down;
  VectorXd bgate, bup, bdown;
};
Ffn expert_of(const ModelWeights& w, int32_t layer, int32_t expert) {
  const ModelSpec& m = w.model();
  const uint64_t f = m.moe.expert_ffn_dim;
  Ffn ffn;
  if (workloads::gated(m.mlp)) {
    ffn.gate = matrix_of(w, Tensor::ExpertGate, layer, f, expert);
    ffn.bgate = bias_of(w, Tensor::ExpertGate, layer, f, expert);
  }
  ffn.up = matrix_of(w, Tensor::ExpertUp, layer, f, expert);
  ffn.bup = bias_of(w, Tensor::ExpertUp, layer, f, expert);
  ffn.down = matrix_of(w, Tensor::ExpertDown, layer, m.d_model, expert);
  ffn.bdown = bias_of(w, Tensor::ExpertDown, layer, m.d_model, expert);
  return ffn;
}
VectorXd run_ffn(const ModelSpec& m, const Ffn& ffn, const VectorXd& x) {
  const VectorXd up = ffn.up * x + ffn.bup;
  VectorXd act(up.size());
  if (workloads::gated(m.mlp)) {
    const VectorXd gate = ffn.gate * x + ffn.bgate;
    for (long e = 0; e < up.size(); ++e) act(e) = gated_activation(m, gate(e), up(e));
  } else {
    for (long e = 0; e < up.size(); ++e) act(e) = gelu(up(e));
  }
  return ffn.down * act + ffn.bdown;
}
VectorXd norm_of(const ModelWeights& w, Tensor tensor, int32_t layer, uint64_t n, bool shift) {
  VectorXd out(n);
  for (uint64_t i = 0; i < n; ++i) out(long(i)) = w.norm(tensor, layer, i, shift);
  return out;
}

struct Layer {
  MatrixXd q, k, v, o, gate, up, down;
  VectorXd bq, bk, bv, bo, bgate, bup, bdown;
  VectorXd attn_g, attn_b, mlp_g, mlp_b, q_g, k_g;
  MatrixXd router;
  VectorXd brouter;
  std::vector<Ffn> experts;  // routed, then shared
};

}  // namespace

struct Reference::State {
  const ModelWeights& w;
  const ModelSpec& m;
  std::vector<Layer> layers;
  MatrixXd lm_head;
  VectorXd lm_head_bias, final_g, final_b;
  // keys[sequence][layer]: one row per position, kv heads side by side
  std::vector<std::vector<MatrixXd>> keys, values;

  explicit State(const ModelWeights& weights) : w(weights), m(weights.model()) {}

  VectorXd norm(const VectorXd& x, const VectorXd& g, const VectorXd& b) const {
    const double n = double(x.size());
    if (m.norm == workloads::NormKind::RMSNorm)
      return x.cwiseProduct(g) / std::sqrt(x.squaredNorm() / n + kNormEpsilon);
    const double mean = x.sum() / n;
    const double var = x.squaredNorm() / n - mean * mean;
    return (x.array() - mean).matrix().cwiseProduct(g) / std::sqrt(var + kNormEpsilon) + b;
  }
  // Rotary turns the pairs (i, i + head_dim / 2) with i < rotated / 2, at the
  // frequencies of a rotated / 2-pair rotary: a partial rotary (rotary_dim)
  // differs from Hugging Face's, which pairs (i, i + rotated / 2), by a fixed
  // permutation of each query and key head's elements only.
  void rotate(VectorXd& head, uint64_t position) const {
    const long half = long(m.head_dim / 2), rotated = long(m.rotated_dims());
    for (long i = 0; i < rotated / 2; ++i) {
      const double angle = double(position) * std::pow(kRopeTheta, -2.0 * double(i) / double(rotated));
      const double c = std::cos(angle), s = std::sin(angle), a = head(i), b = head(i + half);
      head(i) = a * c - b * s;
      head(i + half) = b * c + a * s;
    }
  }
  void head_transform(VectorXd& qkv, uint64_t heads, uint64_t first, const VectorXd& gain, uint64_t position) const {
    const long hd = long(m.head_dim);
    for (uint64_t h = 0; h < heads; ++h) {
      VectorXd head = qkv.segment(long(first + h * m.head_dim), hd);
      if (m.qk_norm) head = head.cwiseProduct(gain) / std::sqrt(head.squaredNorm() / double(hd) + kNormEpsilon);
      if (m.positions == workloads::PositionKind::Rotary) rotate(head, position);
      qkv.segment(long(first + h * m.head_dim), hd) = head;
    }
  }
};

Reference::Reference(const ModelWeights& weights, uint32_t sequences) : state_(std::make_unique<State>(weights)) {
  State& s = *state_;
  const ModelSpec& m = s.m;
  const uint64_t q = uint64_t(m.n_heads) * m.head_dim, kv = uint64_t(m.n_kv_heads) * m.head_dim;
  for (uint32_t l = 0; l < m.n_layers; ++l) {
    const int32_t layer = int32_t(l);
    Layer L;
    L.q = matrix_of(weights, Tensor::Q, layer, q);
    L.k = matrix_of(weights, Tensor::K, layer, kv);
    L.v = matrix_of(weights, Tensor::V, layer, kv);
    L.o = matrix_of(weights, Tensor::O, layer, m.d_model);
    L.bq = bias_of(weights, Tensor::Q, layer, q);
    L.bk = bias_of(weights, Tensor::K, layer, kv);
    L.bv = bias_of(weights, Tensor::V, layer, kv);
    L.bo = bias_of(weights, Tensor::O, layer, m.d_model);
    if (m.is_moe_layer(l)) {
      L.router = matrix_of(weights, Tensor::Router, layer, m.moe.n_experts);
      L.brouter = bias_of(weights, Tensor::Router, layer, m.moe.n_experts);
      for (uint32_t e = 0; e < m.moe.n_experts + m.moe.n_shared_experts; ++e)
        L.experts.push_back(expert_of(weights, layer, int32_t(e)));
    } else {
      if (workloads::gated(m.mlp)) {
        L.gate = matrix_of(weights, Tensor::Gate, layer, m.ffn_dim);
        L.bgate = bias_of(weights, Tensor::Gate, layer, m.ffn_dim);
      }
      L.up = matrix_of(weights, Tensor::Up, layer, m.ffn_dim);
      L.bup = bias_of(weights, Tensor::Up, layer, m.ffn_dim);
      L.down = matrix_of(weights, Tensor::Down, layer, m.d_model);
      L.bdown = bias_of(weights, Tensor::Down, layer, m.d_model);
    }
    L.attn_g = norm_of(weights, Tensor::AttnNorm, layer, m.d_model, false);
    L.attn_b = norm_of(weights, Tensor::AttnNorm, layer, m.d_model, true);
    L.mlp_g = norm_of(weights, Tensor::MlpNorm, layer, m.d_model, false);
    L.mlp_b = norm_of(weights, Tensor::MlpNorm, layer, m.d_model, true);
    L.q_g = norm_of(weights, Tensor::QNorm, layer, m.head_dim, false);
    L.k_g = norm_of(weights, Tensor::KNorm, layer, m.head_dim, false);
    s.layers.push_back(std::move(L));
  }
  s.lm_head = matrix_of(weights, Tensor::LmHead, -1, m.vocab_size);
  s.lm_head_bias = bias_of(weights, Tensor::LmHead, -1, m.vocab_size);
  s.final_g = norm_of(weights, Tensor::FinalNorm, -1, m.d_model, false);
  s.final_b = norm_of(weights, Tensor::FinalNorm, -1, m.d_model, true);
  s.keys.assign(sequences, std::vector<MatrixXd>(m.n_layers));
  s.values = s.keys;
}

Reference::~Reference() = default;

ReferenceToken Reference::step(uint32_t sequence, uint32_t token, uint64_t position,
                               const std::map<int32_t, std::vector<uint32_t>>& routed, double tie) {
  State& s = *state_;
  const ModelSpec& m = s.m;
  const long hd = long(m.head_dim), nq = long(m.n_heads) * hd, nkv = long(m.n_kv_heads) * hd;
  ReferenceToken out;
  VectorXd x(m.d_model);
  for (uint32_t c = 0; c < m.d_model; ++c) {
    x(c) = s.w.matrix(Tensor::Embedding, -1, token, c);
    if (m.positions == workloads::PositionKind::Learned) x(c) += s.w.matrix(Tensor::Positions, -1, position, c);
  }
  out.outer["embed"] = to_std(x);
  for (uint32_t l = 0; l < m.n_layers; ++l) {
    const Layer& L = s.layers[l];
    Values& v = out.layers.emplace_back();
    v["layer_in"] = to_std(x);
    const VectorXd a = s.norm(x, L.attn_g, L.attn_b);
    v["attn_norm"] = to_std(a);
    VectorXd qkv(nq + 2 * nkv);
    qkv << L.q * a + L.bq, L.k * a + L.bk, L.v * a + L.bv;
    v["qkv_raw"] = to_std(qkv);
    s.head_transform(qkv, m.n_heads, 0, L.q_g, position);
    s.head_transform(qkv, m.n_kv_heads, uint64_t(nq), L.k_g, position);
    v["qkv"] = to_std(qkv);
    MatrixXd& K = s.keys[sequence][l];
    MatrixXd& V = s.values[sequence][l];
    K.conservativeResize(long(position + 1), nkv);
    V.conservativeResize(long(position + 1), nkv);
    K.row(long(position)) = qkv.segment(nq, nkv).transpose();
    V.row(long(position)) = qkv.segment(nq + nkv, nkv).transpose();
    const uint64_t attended = m.attended_positions(l, position + 1);
    const long first = long(position + 1 - attended), count = long(attended);
    VectorXd attn(nq);
    const long q_per_kv = long(m.n_heads / m.n_kv_heads);
    for (long h = 0; h < long(m.n_heads); ++h) {
      const long kvh = h / q_per_kv;
      const VectorXd qh = qkv.segment(h * hd, hd);
      VectorXd scores = K.block(first, kvh * hd, count, hd) * qh / std::sqrt(double(hd));
      // A sink logit joins the softmax's denominator only (it has no value).
      const double sink = s.w.sink(int32_t(l), uint32_t(h));
      const double top = m.attention_sinks ? std::max(scores.maxCoeff(), sink) : scores.maxCoeff();
      const VectorXd p = (scores.array() - top).exp().matrix();
      const double denominator = p.sum() + (m.attention_sinks ? std::exp(sink - top) : 0.0);
      attn.segment(h * hd, hd) = V.block(first, kvh * hd, count, hd).transpose() * p / denominator;
    }
    v["attn"] = to_std(attn);
    const VectorXd o = L.o * attn + L.bo;
    v["o"] = to_std(o);
    x += o;
    v["h_mid"] = to_std(x);
    // A parallel residual's MLP reads the attention's input norm.
    const VectorXd b = m.parallel_residual ? a : s.norm(x, L.mlp_g, L.mlp_b);
    v["mlp_norm"] = to_std(b);
    if (m.is_moe_layer(l)) {
      const VectorXd logits = L.router * b + L.brouter;
      v["router"] = to_std(logits);
      VectorXd moe = VectorXd::Zero(long(m.d_model));
      const std::vector<double> all = to_std(logits);
      std::vector<std::pair<uint32_t, double>> picked = pick_experts(all, m.moe.top_k);
      const auto given = routed.find(int32_t(l));
      if (given != routed.end() && given->second.size() == picked.size()) {
        const double kth = all[picked.back().first], scale = logits.cwiseAbs().maxCoeff();
        bool near = true;
        for (uint32_t e : given->second) near = near && e < all.size() && all[e] >= kth - tie * scale;
        std::vector<uint32_t> own, theirs = given->second;
        for (const auto& [e, weight] : picked) own.push_back(e);
        std::sort(own.begin(), own.end());
        std::sort(theirs.begin(), theirs.end());
        if (near && theirs != own) {
          picked = weigh_experts(all, given->second);
          ++out.near_ties_followed;
        }
      }
      for (const auto& [e, weight] : picked) moe += weight * run_ffn(m, L.experts[e], b);
      for (uint32_t e = m.moe.n_experts; e < L.experts.size(); ++e) moe += run_ffn(m, L.experts[e], b);
      v["moe"] = to_std(moe);
      x += moe;
      v["layer_out"] = to_std(x);
      continue;
    }
    const VectorXd up = L.up * b + L.bup;
    VectorXd gate_up(long(gate_up_size(m))), act(long(m.ffn_dim));
    if (workloads::gated(m.mlp)) {
      const VectorXd gate = L.gate * b + L.bgate;
      for (long e = 0; e < long(m.ffn_dim); ++e) {
        gate_up(2 * e) = gate(e), gate_up(2 * e + 1) = up(e);
        act(e) = gated_activation(m, gate(e), up(e));
      }
    } else {
      gate_up = up;
      for (long e = 0; e < long(m.ffn_dim); ++e) act(e) = gelu(up(e));
    }
    v["gate_up"] = to_std(gate_up);
    v["act"] = to_std(act);
    const VectorXd down = L.down * act + L.bdown;
    v["down"] = to_std(down);
    x += down;
    v["layer_out"] = to_std(x);
  }
  const VectorXd h = s.norm(x, s.final_g, s.final_b);
  out.outer["final_hidden"] = to_std(h);
  const VectorXd logits = s.lm_head * h + s.lm_head_bias;
  out.outer["logits"] = to_std(logits);
  long best = 0;
  for (long i = 1; i < logits.size(); ++i)
    if (logits(i) > logits(best)) best = i;
  out.argmax = uint32_t(best);
  return out;
}

}  // namespace wafersim::functional
