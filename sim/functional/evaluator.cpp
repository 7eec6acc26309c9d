#include "sim/functional/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "mapping/mesh_gemm.h"
#include "mapping/slice_exchange.h"
#include "sim/functional/evaluator_state.h"
#include "sim/functional/reference.h"

namespace wafersim::functional {

namespace {

const char* reference_name(const char* label, bool learned_positions) {
  static const std::map<std::string, const char*> names = {{"scatter", "layer_in"},
                                                           {"input_norm", "attn_norm"},
                                                           {"input_norm_scale", "attn_norm"},
                                                           {"qkv_proj", "qkv_raw"},
                                                           {"rotary", "qkv"},
                                                           {"qk_norm", "qkv"},
                                                           {"qkv_slices", "qkv"},
                                                           {"gather_qkv", "qkv"},
                                                           {"attention", "attn"},
                                                           {"o_proj", "o"},
                                                           {"gather_o", "o"},
                                                           {"residual_norm", "mlp_norm"},
                                                           {"attn_residual", "mlp_norm"},
                                                           {"attn_residual_slices", "mlp_norm"},
                                                           {"mlp_norm_scale", "mlp_norm"},
                                                           {"gather_mlp_input", "mlp_norm"},
                                                           {"gate_up_proj", "gate_up"},
                                                           {"activation", "act"},
                                                           {"down_proj", "down"},
                                                           {"gather_down", "down"},
                                                           {"residual", "layer_out"},
                                                           {"residual_slices", "layer_out"},
                                                           {"gather_residual", "layer_out"},
                                                           {"position_add", "embed"},
                                                           {"final_norm", "final_hidden"},
                                                           {"lm_head_proj", "logits"},
                                                           {"router", "router"},
                                                           {"gather_logits", "router"},
                                                           {"experts", "moe"},
                                                           {"scatter_moe_output", "moe"}};
  if (std::strcmp(label, "lookup") == 0) return learned_positions ? "" : "embed";
  const auto found = names.find(label);
  return found == names.end() ? "" : found->second;
}

}  // namespace

std::string unsupported_reason(const workloads::ModelSpec& m) {
  // The reference forward pass and the evaluator's attention know Q/K/V heads only.
  if (m.is_mla())
    return "multi-head latent attention (model.mla) is not evaluated: the reference has no latent projections and the "
           "evaluator no absorbed ones";
  for (Dtype dtype : {m.kv_dtype, m.activation_dtype})
    if (!supported_dtype(dtype))
      return fmt::format("{} activations or KV entries are not emulated (fp32, fp16 and bf16 are)", to_string(dtype));
  for (Dtype dtype : {m.weight_dtype, m.moe.n_experts ? m.moe_weight_dtype : Dtype::BF16})
    if (!supported_weight_dtype(dtype))
      return fmt::format("{} weights are not emulated (fp32, fp16, bf16 and mxfp4 are)", to_string(dtype));
  return "";
}

std::string unsupported_reason(const mapping::Plan& plan) { return unsupported_reason(plan.model); }

void Evaluator::State::swap_token(TokenState& t) {
  std::swap(sequence, t.sequence);
  std::swap(token, t.token);
  std::swap(position, t.position);
  std::swap(in_chunk, t.in_chunk);
  std::swap(result, t.result);
  std::swap(normed, t.normed);
  std::swap(routing, t.routing);
  std::swap(stream, t.stream);
  std::swap(qkv_slices, t.qkv_slices);
  std::swap(attn_input, t.attn_input);
}

// fp32 statistics of a slice: RMSNorm the sum of squares; LayerNorm the sum too.
std::vector<float> Evaluator::State::statistics(const std::vector<float>& x) const {
  float squares = 0, sum = 0;
  for (float v : x) squares += v * v, sum += v;
  if (m.norm == workloads::NormKind::RMSNorm) return {squares};
  return {squares, sum};
}

// Scales a slice with the whole vector's statistics.
Piece Evaluator::State::scale(const Piece& slice, const std::vector<float>& stats, Tensor tensor) const {
  const int32_t layer = region->layer;
  const float n = float(m.d_model);
  Piece out = slice;
  const float mean = m.norm == workloads::NormKind::RMSNorm ? 0.0f : stats[1] / n;
  const float variance = stats[0] / n - mean * mean;
  const float inverse = 1.0f / std::sqrt(variance + float(kNormEpsilon));
  for (size_t k = 0; k < out.value.size(); ++k) {
    const uint32_t c = out.index[k];
    float y = (out.value[k] - mean) * inverse * w.norm(tensor, layer, c);
    if (m.norm == workloads::NormKind::LayerNorm) y += w.norm(tensor, layer, c, true);
    out.value[k] = rounded(y);
  }
  return out;
}

Data Evaluator::State::root_norm(const Data& in, Tensor tensor) const {
  return Data{FrontKind::Root, {scale(in.at[0], statistics(in.at[0].value), tensor)}};
}

Piece Evaluator::State::add(const Piece& stream_slice, const Piece& branch) const {
  if (stream_slice.index != branch.index) fail("the residual stream and the branch are not sliced alike");
  Piece out = stream_slice;
  for (size_t k = 0; k < out.value.size(); ++k) out.value[k] = rounded(stream_slice.value[k] + branch.value[k]);
  return out;
}

Evaluator::State::MatrixRow Evaluator::State::matrix_row(uint64_t o) const {
  const std::string label = step->label();
  const uint64_t nq = uint64_t(m.n_heads) * m.head_dim, nkv = uint64_t(m.n_kv_heads) * m.head_dim;
  const bool gated = workloads::gated(m.mlp);
  if (block_index > 0) {  // an expert block: routed experts first, then the shared ones, as the blocks are built
    const int32_t expert = int32_t(block_index - 1);
    if (label == "gate_up_proj")
      return gated ? MatrixRow{o % 2 == 0 ? Tensor::ExpertGate : Tensor::ExpertUp, o / 2, expert}
                   : MatrixRow{Tensor::ExpertUp, o, expert};
    if (label == "down_proj") return {Tensor::ExpertDown, o, expert};
  }
  if (label == "qkv_proj")
    return o < nq         ? MatrixRow{Tensor::Q, o}
           : o < nq + nkv ? MatrixRow{Tensor::K, o - nq}
                          : MatrixRow{Tensor::V, o - nq - nkv};
  if (label == "gate_up_proj")
    return gated ? MatrixRow{o % 2 == 0 ? Tensor::Gate : Tensor::Up, o / 2} : MatrixRow{Tensor::Up, o};
  if (label == "o_proj") return {Tensor::O, o};
  if (label == "down_proj") return {Tensor::Down, o};
  if (label == "lm_head_proj") return {Tensor::LmHead, o};
  if (label == "router") return {Tensor::Router, o};
  fail("no matrix is known for this step");
}

// Query, key and value heads with each rotary pair (e, e + head_dim / 2) adjacent.
void Evaluator::State::append_heads(std::vector<uint32_t>& list, uint64_t first, uint64_t heads) const {
  const uint32_t hd = m.head_dim, half = hd / 2;
  for (uint64_t h = 0; h < heads; ++h)
    for (uint32_t e = 0; e < half; ++e) {
      list.push_back(uint32_t(first + h * hd + e));
      list.push_back(uint32_t(first + h * hd + e + half));
    }
}

// The QKV elements of the KV heads [first, last): their query heads, keys and values.
std::vector<uint32_t> Evaluator::State::qkv_of_kv_heads(uint32_t first, uint32_t last) const {
  const uint32_t q_per_kv = m.n_heads / m.n_kv_heads;
  return qkv_elements(first * q_per_kv, last * q_per_kv, first, last);
}

// The QKV elements of the query heads [q_first, q_last) and of the keys and values of the KV heads [first, last).
std::vector<uint32_t> Evaluator::State::qkv_elements(uint32_t q_first, uint32_t q_last, uint32_t first,
                                                     uint32_t last) const {
  const uint64_t hd = m.head_dim, nq = uint64_t(m.n_heads) * hd, nkv = uint64_t(m.n_kv_heads) * hd;
  std::vector<uint32_t> list;
  append_heads(list, uint64_t(q_first) * hd, q_last - q_first);
  if (first >= last) return list;
  append_heads(list, nq + first * hd, last - first);
  append_heads(list, nq + nkv + first * hd, last - first);
  return list;
}

// The QKV elements group g's slices hold: its query heads, and the keys and
// values of its KV heads in their first copy (mapping/kv_groups.h).
std::vector<uint32_t> Evaluator::State::qkv_of_group(const mapping::KvGroups& groups, uint32_t g) const {
  const auto [first, last] = groups.kv_head_range(g);
  const auto [q_first, q_last] = groups.query_range(g);
  if (groups.first_copy(g) != g) return qkv_elements(q_first, q_last, 0, 0);
  return qkv_elements(q_first, q_last, first, last);
}

// Grid attention: the head dimensions of the KV heads [first, last), as
// kv_head * head_dim + d with each rotary pair together, cut into near-equal
// runs of whole pairs, one per column of the group.
std::vector<std::vector<uint32_t>> Evaluator::State::grid_dims(uint32_t first, uint32_t last, uint32_t columns) const {
  std::vector<uint32_t> list;
  append_heads(list, uint64_t(first) * m.head_dim, last - first);
  return split(list, columns, 2);
}

const mapping::KvGroupAttention* Evaluator::State::next_attention() const {
  for (size_t t = s + 1; t < block->steps.size(); ++t)
    if (const auto* attention = dynamic_cast<const mapping::KvGroupAttention*>(block->steps[t].get())) return attention;
  return nullptr;
}

// Column p of the group holds, for each of its head dimensions, that dimension of every query head of the group's
// KV heads, of their keys and of their values.
std::vector<std::vector<uint32_t>> Evaluator::State::grid_slices(uint32_t first, uint32_t last,
                                                                 uint32_t columns) const {
  const uint64_t hd = m.head_dim, nq = uint64_t(m.n_heads) * hd, nkv = uint64_t(m.n_kv_heads) * hd;
  const uint32_t q_per_kv = m.n_heads / m.n_kv_heads;
  const auto dims = grid_dims(first, last, columns);
  std::vector<std::vector<uint32_t>> out(columns);
  for (uint32_t p = 0; p < columns; ++p)
    for (uint32_t t : dims[p]) {
      const uint64_t h = t / hd, d = t % hd;
      for (uint32_t q = 0; q < q_per_kv; ++q) out[p].push_back(uint32_t((h * q_per_kv + q) * hd + d));
      out[p].push_back(uint32_t(nq + t));
      out[p].push_back(uint32_t(nq + nkv + t));
    }
  return out;
}

// Within each KV head's columns (the grid's groups) every element the new
// order puts on a column must be on one of the line's columns.
Data Evaluator::State::slice_exchange(const Data& in, const mapping::SliceExchangeStep& exchange) const {
  const BlockGeometry& g = geo();
  if (in.kind != FrontKind::Row || in.at.size() != g.cols) fail("the slices are not on the root row");
  const mapping::KvGroups& lines = exchange.lines();
  const mapping::KvGroups& decode = exchange.decode_groups();
  const uint64_t hd = m.head_dim;
  Data out{FrontKind::Row, std::vector<Piece>(g.cols)};
  for (uint32_t line = 0; line < lines.count; ++line) {
    const uint32_t start = lines.start[line], end = lines.start[line + 1];
    ByIndex held;
    for (uint32_t j = start; j < end; ++j)
      for (size_t k = 0; k < in.at[j].index.size(); ++k) held[in.at[j].index[k]] = in.at[j].value[k];
    std::vector<std::vector<uint32_t>> wanted(end - start);
    if (exchange.to_grid()) {
      const auto [first, last] = lines.kv_head_range(line);
      wanted = grid_slices(first, last, end - start);
    } else {  // decode's attention output: each group's query heads cut over its columns
      for (uint32_t group = decode.of[start]; group < decode.count && decode.start[group] < end; ++group) {
        const auto [q_first, q_last] = decode.query_range(group);
        const auto cuts = split(iota(uint64_t(q_first) * hd, uint64_t(q_last) * hd), decode.columns(group));
        for (uint32_t p = 0; p < cuts.size(); ++p) wanted[decode.start[group] - start + p] = cuts[p];
      }
    }
    for (uint32_t p = 0; p < wanted.size(); ++p)
      for (uint32_t index : wanted[p]) {
        const auto found = held.find(index);
        if (found == held.end())
          fail(fmt::format("element {} is on none of columns {}..{} to go to column {}", index, start, end - 1,
                           start + p));
        out.at[start + p].index.push_back(index);
        out.at[start + p].value.push_back(found->second);
      }
  }
  return out;
}

// Which output elements line position p of this GEMV leaves (the weight rows its tiles hold).
std::vector<std::vector<uint32_t>> Evaluator::State::output_slices(uint32_t parts) const {
  const std::string label = step->label();
  if (label == "qkv_proj") {
    const mapping::KvGroupAttention* attention = next_attention();
    if (!attention) fail("no attention step follows");
    const auto* groups_layout = dynamic_cast<const mapping::AttentionStep*>(attention);
    if (groups_layout && !groups_layout->row_io()) return split(qkv_of_kv_heads(0, m.n_kv_heads), parts, 2);
    // Each KV-head group's columns hold that group's queries, keys and values:
    // cut by whole heads, or with grid attention by runs of head dimensions.
    // The weights keep decode's order: a prefill's grid under decode's groups
    // gets its order from the slices' exchange before attention.
    bool grid = dynamic_cast<const mapping::GridAttentionStep*>(attention) != nullptr;
    const mapping::KvGroups* groups = &attention->groups();
    for (size_t t = s + 1; t < block->steps.size(); ++t)
      if (const auto* exchange = dynamic_cast<const mapping::SliceExchangeStep*>(block->steps[t].get())) {
        if (exchange->to_grid()) grid = false, groups = &exchange->decode_groups();
        break;
      }
    std::vector<std::vector<uint32_t>> out(parts);
    for (uint32_t g = 0; g < groups->count; ++g) {
      const uint32_t start = groups->start[g], columns = groups->columns(g);
      const auto [first, last] = groups->kv_head_range(g);
      const auto pieces = grid ? grid_slices(first, last, columns) : split(qkv_of_group(*groups, g), columns, 2);
      for (uint32_t p = 0; p < pieces.size(); ++p) out[start + p] = pieces[p];
    }
    return out;
  }
  if (label == "gate_up_proj") {
    const auto elements = split(iota(0, block_index > 0 ? m.moe.expert_ffn_dim : m.ffn_dim), parts);
    std::vector<std::vector<uint32_t>> out(parts);
    for (uint32_t p = 0; p < parts; ++p)
      for (uint32_t e : elements[p]) {
        if (workloads::gated(m.mlp)) out[p].push_back(2 * e);
        out[p].push_back(workloads::gated(m.mlp) ? 2 * e + 1 : e);
      }
    return out;
  }
  const uint64_t n = label == "lm_head_proj" ? m.vocab_size : label == "router" ? m.moe.n_experts : m.d_model;
  return split(iota(0, n), parts);
}

const std::vector<float>& Evaluator::State::weight_block(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows,
                                                         const std::vector<uint32_t>& columns) {
  auto [it, fresh] = blocks.try_emplace({r, block_index, step->label(), i, j});
  if (fresh) {
    it->second.reserve(rows.size() * columns.size());
    for (uint32_t o : rows) {
      const MatrixRow at = matrix_row(o);
      for (uint32_t c : columns) it->second.push_back(w.matrix(at.tensor, region->layer, at.row, c, at.expert));
    }
  }
  if (it->second.size() != rows.size() * columns.size()) fail("a tile's weight block changed shape");
  return it->second;
}

// Tile (i, j) multiplies its block by its input slice in fp32; the tiles that
// hold the bias slices add them.
std::vector<float> Evaluator::State::block_product(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows,
                                                   const Piece& x, bool with_bias) {
  const std::vector<float>& weights = weight_block(i, j, rows, x.index);
  std::vector<float> y(rows.size(), 0.0f);
  for (size_t o = 0; o < rows.size(); ++o) {
    float sum = 0;
    for (size_t c = 0; c < x.value.size(); ++c) sum += weights[o * x.value.size() + c] * x.value[c];
    if (with_bias) {
      const MatrixRow at = matrix_row(rows[o]);
      sum += w.bias(at.tensor, region->layer, at.row, at.expert);
    }
    y[o] = sum;
  }
  return y;
}

void Evaluator::State::add_into(std::vector<float>& a, const std::vector<float>& b) {
  for (size_t k = 0; k < a.size(); ++k) a[k] += b[k];
}

// A GEMV's partial sums: each tile writes its own in mapping.partial_sum_dtype,
// and every add of the tree rounds to it again.
std::vector<float> Evaluator::State::partial_sum(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows,
                                                 const Piece& x, bool with_bias) {
  std::vector<float> y = block_product(i, j, rows, x, with_bias);
  for (float& v : y) v = round_to(partial, v);
  return y;
}

// A line's partial sums (mapping.partial_sum_dtype, every add rounded to it) combined: by the step's tree, or, in a
// MeshGEMM, on its ring: the token's block b starts at the ring successor
// of position b, each tile adds its product as the partial passes, and the
// sum is finished at b.
std::vector<float> Evaluator::State::reduce_line(std::vector<std::vector<float>> partial, uint32_t ring_block_tokens,
                                                 int64_t drop) const {
  if (ring_block_tokens == 0) return reduce_tree(std::move(partial), *step, add_partials(), drop);
  const uint32_t n = uint32_t(partial.size()), finish = in_chunk / ring_block_tokens;
  if (finish >= n) fail(fmt::format("token {} of the chunk has no ring position to finish at", in_chunk));
  std::vector<float> sum(partial[0].size(), 0.0f);
  uint32_t at = mapping::interleaved_ring_next(finish, n);
  bool first = true;
  std::vector<bool> seen(n, false);
  for (uint32_t visited = 0; visited < n; ++visited, at = mapping::interleaved_ring_next(at, n)) {
    if (seen[at]) fail(fmt::format("the partial-sum ring passes position {} twice", at));
    seen[at] = true;
    if (int64_t(at) == drop) continue;
    if (first)
      sum = partial[at], first = false;
    else
      add_partials()(sum, partial[at]);
  }
  return sum;
}

Data Evaluator::State::gemv_to_column(const Data& in, bool input_on_row, uint32_t ring_block_tokens) {
  const BlockGeometry& g = geo();
  std::vector<Piece> x(g.cols);
  if (input_on_row && in.kind != FrontKind::Root) {  // at the root: the expert dispatch's multicast
    if (in.kind != FrontKind::Row || in.at.size() != g.cols) fail("the input is not on the root row");
    x = in.at;
  } else {  // the root's vector, multicast along the root row: column j keeps slice j
    const auto cuts = split(in.at[0].index, g.cols);
    for (uint32_t j = 0; j < g.cols; ++j)
      for (uint32_t k : cuts[j]) x[j].index.push_back(k), x[j].value.push_back(in.at[0].value[k]);
  }
  const auto rows = output_slices(g.rows);
  Data out{FrontKind::Column, std::vector<Piece>(g.rows)};
  for (uint32_t i = 0; i < g.rows; ++i) {
    std::vector<std::vector<float>> partial(g.cols);
    for (uint32_t j = 0; j < g.cols; ++j) partial[j] = partial_sum(i, j, rows[i], x[j], j == g.root_j());
    out.at[i].index = rows[i];
    out.at[i].value = reduce_line(std::move(partial), ring_block_tokens, dropped(i));
  }
  return out;
}

Data Evaluator::State::gemv_to_row(const Data& in, uint32_t ring_block_tokens) {
  const BlockGeometry& g = geo();
  if (in.kind != FrontKind::Column || in.at.size() != g.rows) fail("the input is not on the root column");
  // The router on slices (mapping.moe_combine: columns): its input is what the experts take.
  if (std::strcmp(step->label(), "router") == 0) normed = assembled(in);
  const auto columns = output_slices(g.cols);
  Data out{FrontKind::Row, std::vector<Piece>(g.cols)};
  for (uint32_t j = 0; j < g.cols; ++j) {
    std::vector<std::vector<float>> partial(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i) partial[i] = partial_sum(i, j, columns[j], in.at[i], i == g.root_i());
    out.at[j].index = columns[j];
    out.at[j].value = reduce_line(std::move(partial), ring_block_tokens, dropped(j));
  }
  return out;
}

// q/k norm and rotary of the query and key elements a slice holds.
// With `head_squares` (every q then k head's sum of squares, reduced over the
// tiles), a tile normalises heads it holds only part of.
Piece Evaluator::State::head_transform(Piece piece, const std::string& where,
                                       const std::vector<float>* head_squares) const {
  const uint32_t hd = m.head_dim, half = hd / 2;
  const uint64_t nq = uint64_t(m.n_heads) * hd, nk = nq + uint64_t(m.n_kv_heads) * hd;
  std::map<uint32_t, size_t> at;
  for (size_t k = 0; k < piece.index.size(); ++k) at[piece.index[k]] = k;
  std::vector<float> out = piece.value;
  std::map<uint32_t, bool> heads;  // head start -> done
  for (uint32_t index : piece.index)
    if (index < nk) heads[index - index % hd] = true;
  for (const auto& [start, unused] : heads) {
    const bool query = start < nq;
    if (m.qk_norm) {
      float squares = 0;
      if (head_squares) {
        squares = (*head_squares)[start / hd];  // q heads, then k heads: the QKV order
      } else {
        for (uint32_t e = 0; e < hd; ++e) {
          const auto found = at.find(start + e);
          if (found == at.end()) fail("q/k norm of a head split across tiles at " + where);
          squares += piece.value[found->second] * piece.value[found->second];
        }
      }
      const float inverse = 1.0f / std::sqrt(squares / float(hd) + float(kNormEpsilon));
      for (uint32_t e = 0; e < hd; ++e) {
        const auto found = at.find(start + e);
        if (found == at.end()) continue;  // on another tile, normalised there with the same sum
        out[found->second] =
            piece.value[found->second] * inverse * w.norm(query ? Tensor::QNorm : Tensor::KNorm, region->layer, e);
      }
    }
    // Rotary turns the pairs (e, e + head_dim / 2) with e < rotated / 2 (reference.cpp's rotate).
    const uint32_t rotated = m.rotated_dims();
    for (uint32_t e = 0; e < rotated / 2; ++e) {
      const auto a = at.find(start + e), b = at.find(start + e + half);
      if ((a == at.end()) != (b == at.end())) fail("a rotary pair split across tiles at " + where);
      if (a == at.end()) continue;
      const double angle = double(position) * std::pow(kRopeTheta, -2.0 * double(e) / double(rotated));
      const float c = float(std::cos(angle)), sn = float(std::sin(angle));
      const float x = out[a->second], y = out[b->second];
      out[a->second] = x * c - y * sn;
      out[b->second] = y * c + x * sn;
    }
  }
  for (float& v : out) v = rounded(v);
  piece.value = std::move(out);
  return piece;
}

Piece Evaluator::State::activation_of(const Piece& piece) const {
  Piece out;
  for (size_t k = 0; k < piece.index.size(); ++k) {
    if (workloads::gated(m.mlp)) {
      if (piece.index[k] % 2 != 0) continue;
      if (k + 1 >= piece.index.size() || piece.index[k + 1] != piece.index[k] + 1)
        fail("a gate element without its up element on the tile");
      out.index.push_back(piece.index[k] / 2);
      out.value.push_back(rounded(activation(m, piece.value[k], piece.value[k + 1])));
    } else {
      out.index.push_back(piece.index[k]);
      out.value.push_back(rounded(activation(m, 0, piece.value[k])));
    }
  }
  return out;
}

uint64_t Evaluator::State::gathered_size() const {
  const std::string label = step->label();
  if (label == "gather_qkv") return qkv_size(m);
  if (label == "gather_logits") return m.moe.n_experts;
  return m.d_model;
}

Data Evaluator::State::gather(const Data& in, bool reduce) {
  const std::string label = step->label();
  if (reduce) {
    std::vector<std::vector<float>> parts;
    for (const Piece& piece : in.at) parts.push_back(piece.value);
    if (label == "argmax") {
      auto better = [](std::vector<float>& a, const std::vector<float>& b) {
        if (b[0] > a[0] || (b[0] == a[0] && b[1] < a[1])) a = b;
      };
      return at_root(reduce_tree(std::move(parts), *step, better, dropped(0)));
    }
    return at_root(reduce_tree(std::move(parts), *step, add_into, dropped(0)));
  }
  // Concatenation: the slices travel in the activation format.
  std::vector<std::vector<Piece>> parts;
  const bool fp32 = label == "gather_logits";  // the router's logits travel as fp32
  for (const Piece& piece : in.at) {
    Piece sent = piece;
    if (!fp32)
      for (float& v : sent.value) v = rounded(v);
    parts.push_back({std::move(sent)});
  }
  auto append = [](std::vector<Piece>& a, const std::vector<Piece>& b) { a.insert(a.end(), b.begin(), b.end()); };
  const std::vector<Piece> all = reduce_tree(std::move(parts), *step, append, dropped(0));
  const uint64_t n = gathered_size();
  std::vector<float> vector(n, NAN);
  std::vector<bool> seen(n, false);
  for (const Piece& piece : all)
    for (size_t k = 0; k < piece.index.size(); ++k) {
      if (piece.index[k] >= n || seen[piece.index[k]]) fail("the gathered slices overlap");
      seen[piece.index[k]] = true;
      vector[piece.index[k]] = piece.value[k];
    }
  for (uint64_t k = 0; k < n; ++k)
    if (!seen[k]) fail(fmt::format("element {} never reaches the root", k));
  if (label == "gather_mlp_input") normed = vector;  // what the router's top-k hands to the experts
  return at_root(std::move(vector));
}

Data Evaluator::State::broadcast(const Data& in, bool along_row) {
  const BlockGeometry& g = geo();
  if (along_row) return Data{FrontKind::Row, std::vector<Piece>(g.cols, in.at[0])};
  Data out{FrontKind::Column, {}};
  // Each root-column tile keeps its slice: of the stream, or of the experts' sum that joins it.
  const bool stream_in = std::strcmp(step->label(), "scatter") == 0;
  if (stream_in || std::strcmp(step->label(), "scatter_moe_output") == 0) {
    const auto cuts = split(in.at[0].index, g.rows);
    for (uint32_t i = 0; i < g.rows; ++i) {
      Piece piece;
      for (uint32_t k : cuts[i]) piece.index.push_back(k), piece.value.push_back(in.at[0].value[k]);
      out.at.push_back(std::move(piece));
    }
    if (stream_in) stream = out;
    return out;
  }
  out.at.assign(g.rows, in.at[0]);
  return out;
}

Data Evaluator::State::lookup() const {
  std::vector<float> row(m.d_model);
  for (uint32_t c = 0; c < m.d_model; ++c) row[c] = rounded(w.matrix(Tensor::Embedding, -1, token, c));
  return at_root(std::move(row));
}

// Each step kind's case (mapping/step_visitor.h): a kind without one does not compile.
class Evaluator::State::ChunkThroughStep final : public mapping::StepVisitor {
 public:
  ChunkThroughStep(State& state, const Tokens& tokens) : state_(state), tokens_(tokens) {}
  void visit(const mapping::RootComputeStep&) override {
    each([&](const Data& in) { return elementwise(in, false, false); });
  }
  void visit(const mapping::LookupStep&) override {
    each([&](const Data&) { return state_.lookup(); });
  }
  void visit(const mapping::GemvToColumnStep& step) override {
    each([&](const Data& in) { return state_.gemv_to_column(in, step.input_on_row(), 0); });
  }
  void visit(const mapping::GemvToRowStep&) override {
    each([&](const Data& in) { return state_.gemv_to_row(in, 0); });
  }
  void visit(const mapping::MeshGemmStep& step) override {
    each([&](const Data& in) {
      return step.from_column() ? state_.gemv_to_row(in, step.ring_block_tokens())
                                : state_.gemv_to_column(in, true, step.ring_block_tokens());
    });
  }
  void visit(const mapping::LineComputeStep& step) override {
    each([&](const Data& in) { return elementwise(in, true, step.along_row()); });
  }
  void visit(const mapping::BroadcastStep& step) override {
    each([&](const Data& in) { return state_.broadcast(in, step.along_row()); });
  }
  void visit(const mapping::GatherStep& step) override {
    each([&](const Data& in) { return state_.gather(in, step.reduce()); });
  }
  // The chunk's keys and values first, then each token over the positions up to its own.
  void visit(const mapping::AttentionStep& step) override {
    state_.each_token(tokens_, [&](size_t, TokenState& t) { state_.attention(t.data, step, KvPass::Store); });
    each([&](const Data& in) { return state_.attention(in, step, KvPass::Attend); });
  }
  void visit(const mapping::GridAttentionStep& step) override {
    state_.each_token(tokens_, [&](size_t, TokenState& t) { state_.grid_attention(t.data, step, KvPass::Store); });
    each([&](const Data& in) { return state_.grid_attention(in, step, KvPass::Attend); });
  }
  void visit(const mapping::SliceExchangeStep& step) override {
    each([&](const Data& in) { return state_.slice_exchange(in, step); });
  }
  void visit(const mapping::DispatchStep&) override { state_.dispatch(tokens_); }

 private:
  Data elementwise(const Data& in, bool on_line, bool along_row) {
    const Elementwise* op = State::elementwise(state_.step->label(), on_line);
    if (!op) state_.fail("no element-wise meaning is registered for this step");
    return (*op)(state_, in, along_row);
  }
  // Every token's data through `f`, token by token.
  template <typename F>
  void each(F f) {
    state_.each_token(tokens_, [&](size_t, TokenState& t) { t.data = f(t.data); });
  }

  State& state_;
  const Tokens& tokens_;
};

void Evaluator::State::observe_step(const Data& data, const StepObserver& observe) const {
  const char* name = reference_name(step->label(), m.positions == workloads::PositionKind::Learned);
  // The embedding's scatter (the slices hand-off) spreads its output: the embedded token.
  if (region->layer < 0 && std::strcmp(step->label(), "scatter") == 0) name = "embed";
  if (!observe || !*name || block_index > 0) return;  // expert blocks: their combined output is compared
  StepOutput output{region, step->label(), name, {}};
  const BlockGeometry& g = geo();
  for (size_t p = 0; p < data.at.size(); ++p) {
    const uint32_t i = data.kind == FrontKind::Column ? uint32_t(p) : 0;
    const uint32_t j = data.kind == FrontKind::Row ? uint32_t(p) : 0;
    output.slices.push_back({g.wafer, g.x(i, j), g.y(i, j), data.at[p].index, data.at[p].value});
  }
  observe(output);
}

// An expert's result, whole: at its root, or as slices on its root row (mapping.moe_combine: columns).
std::vector<float> Evaluator::State::assembled(const Data& data) const {
  std::vector<float> vector(m.d_model, NAN);
  std::vector<bool> seen(m.d_model, false);
  for (const Piece& piece : data.at)
    for (size_t k = 0; k < piece.index.size(); ++k) {
      if (piece.index[k] >= m.d_model || seen[piece.index[k]]) fail("an expert's result slices overlap");
      seen[piece.index[k]] = true;
      vector[piece.index[k]] = piece.value[k];
    }
  for (uint32_t k = 0; k < m.d_model; ++k)
    if (!seen[k]) fail(fmt::format("element {} of an expert's result is missing", k));
  return vector;
}

// The slices of a vector on the region's root column, as the residual stream holds them.
Data Evaluator::State::on_root_column(const std::vector<float>& vector) const {
  const auto cuts = split(whole(vector).index, region->blocks[0].geo.rows);
  Data out{FrontKind::Column, {}};
  for (const std::vector<uint32_t>& cut : cuts) {
    Piece piece;
    for (uint32_t k : cut) piece.index.push_back(k), piece.value.push_back(vector[k]);
    out.at.push_back(std::move(piece));
  }
  return out;
}

// One token's expert results (by block; empty: not routed, its block skipped
// the token) combined. mapping.moe_combine root: each result is sent in
// activations and summed at the layer root in block order. tree: fp32 sums
// along the combining tree (Block::combine_children), where a block adds the
// streams it takes in, in that order, to its own result. columns: the same
// along each chain of blocks (Block::combine_children), each chain's top
// rounding its sum to activations before the root column adds them. `drop` (a
// DroppedPartialSum on line 0 of the step) loses the message of the expert
// at that position (block index - 1).
std::vector<float> Evaluator::State::combine(const std::vector<std::vector<float>>& own, int64_t drop) const {
  const Region& layer = *region;
  const size_t blocks = layer.blocks.size();
  std::vector<float> sum(m.d_model, 0.0f);
  if (plan->options.moe_combine == mapping::MoeCombine::Columns) {
    // Each chain from its last block up to its top, which writes its sum out
    // as activations; the root column adds the tops' sums in chain order.
    std::vector<std::vector<float>> streams(blocks);
    std::vector<bool> child(blocks, false);
    for (size_t b = blocks; b-- > 1;) {
      std::vector<float> acc = own[b];
      for (const uint32_t below : layer.blocks[b].combine_children) {
        child[below] = true;
        if (streams[below].empty() || int64_t(below) - 1 == drop) continue;
        if (acc.empty()) acc.assign(m.d_model, 0.0f);
        for (uint32_t k = 0; k < m.d_model; ++k) acc[k] += streams[below][k];
      }
      streams[b] = std::move(acc);
    }
    for (size_t b = 1; b < blocks; ++b)
      if (!child[b] && !streams[b].empty() && int64_t(b) - 1 != drop)
        for (uint32_t k = 0; k < m.d_model; ++k) sum[k] += rounded(streams[b][k]);
  } else if (plan->options.moe_combine != mapping::MoeCombine::Tree) {
    for (size_t b = 1; b < blocks; ++b)
      if (!own[b].empty() && int64_t(b - 1) != drop)
        for (uint32_t k = 0; k < m.d_model; ++k) sum[k] += rounded(own[b][k]);  // sent in activations
  } else {
    // Children come after their parents: from the last block.
    std::vector<std::vector<float>> streams(blocks);
    for (size_t b = blocks; b-- > 1;) {
      std::vector<float> acc = own[b];
      for (const uint32_t child : layer.blocks[b].combine_children) {
        if (streams[child].empty() || int64_t(child) - 1 == drop) continue;
        if (acc.empty()) {
          acc = streams[child];
        } else {
          for (uint32_t k = 0; k < m.d_model; ++k) acc[k] += streams[child][k];
        }
      }
      streams[b] = std::move(acc);
    }
    if (blocks > 1 && !streams[1].empty() && drop != 0) sum = streams[1];
  }
  for (float& v : sum) v = rounded(v);
  return sum;
}

// The experts the router picked and the shared ones, each on its block. A
// block takes every token of the chunk routed to it (a shared expert every
// token) through its steps, as one chunk; then each token's results are combined.
void Evaluator::State::dispatch(const Tokens& tokens) {
  const size_t saved_s = s;
  const Step* saved_step = step;
  const int64_t drop = dropped(0);
  const size_t blocks = region->blocks.size();
  std::vector<Data> inputs(tokens.size());
  std::vector<std::vector<std::vector<float>>> own(tokens.size(), std::vector<std::vector<float>>(blocks));
  for (size_t k = 0; k < tokens.size(); ++k) inputs[k] = tokens[k]->data;
  for (size_t expert_block = 1; expert_block < blocks; ++expert_block) {
    const int32_t expert = region->blocks[expert_block].expert;
    Tokens taken;
    std::vector<size_t> index;
    for (size_t k = 0; k < tokens.size(); ++k)
      if (expert < 0 || tokens[k]->routing.count(uint32_t(expert)) > 0) {  // else its block skips the token
        tokens[k]->data = inputs[k];
        taken.push_back(tokens[k]);
        index.push_back(k);
      }
    if (taken.empty()) continue;
    run_block(expert_block, taken, nullptr);
    for (size_t t = 0; t < taken.size(); ++t) own[index[t]][expert_block] = assembled(taken[t]->data);
  }
  block_index = 0;
  block = &region->blocks[0];
  s = saved_s;
  step = saved_step;
  const bool columns = plan->options.moe_combine == mapping::MoeCombine::Columns;
  for (size_t k = 0; k < tokens.size(); ++k) {
    std::vector<float> sum = combine(own[k], drop);
    tokens[k]->data = columns ? on_root_column(std::move(sum)) : at_root(std::move(sum));
  }
}

void Evaluator::State::keep_result(const Data& data) {
  const std::string label = step->label();
  if (label == "final_norm") result.final_hidden = data.at[0].value;
  if (label == "lm_head_proj") {
    result.logits.assign(m.vocab_size, NAN);
    for (const Piece& piece : data.at)
      for (size_t k = 0; k < piece.index.size(); ++k) result.logits[piece.index[k]] = piece.value[k];
  }
  if (label == "sample") result.argmax = uint32_t(data.at[0].value.at(1));
}

// Every step of block `index` takes every token before the next step starts.
void Evaluator::State::run_block(size_t index, const Tokens& tokens, const ChunkObserver* observe) {
  block_index = index;
  block = &region->blocks[index];
  const auto& steps = block->steps;
  for (s = 0; s < steps.size(); ++s) {
    step = steps[s].get();
    ChunkThroughStep through(*this, tokens);
    step->accept(through);
    if (block_index > 0) continue;  // expert blocks: their combined output is compared
    each_token(tokens, [&](size_t k, TokenState& t) {
      if (observe) observe_step(t.data, [&](const StepOutput& output) { (*observe)(k, output); });
      keep_result(t.data);
    });
  }
  // The layer's chain ends on its root column with the slices hand-off; an
  // expert's on its root row when the experts combine along columns.
  const FrontKind end = index == 0 && region->slices_out                                         ? FrontKind::Column
                        : index > 0 && plan->options.moe_combine == mapping::MoeCombine::Columns ? FrontKind::Row
                                                                                                 : FrontKind::Root;
  each_token(tokens, [&](size_t, TokenState& t) {
    if (t.data.kind != end)
      fail(end == FrontKind::Column ? "the block's chain does not end on its root column"
           : end == FrontKind::Row  ? "the block's chain does not end on its root row"
                                    : "the block's chain does not end at its root");
  });
}

// The slices hand-off: each root-column tile takes the elements of its slice,
// wherever in the previous region's root column they were.
Data Evaluator::State::resliced(const Data& in) {
  std::vector<float> vector(m.d_model, NAN);
  std::vector<bool> seen(m.d_model, false);
  for (const Piece& piece : in.at)
    for (size_t k = 0; k < piece.index.size(); ++k) {
      if (piece.index[k] >= m.d_model || seen[piece.index[k]])
        throw FunctionalError(fmt::format("{}: the slices handed on overlap", region->name));
      seen[piece.index[k]] = true;
      vector[piece.index[k]] = piece.value[k];
    }
  for (uint32_t k = 0; k < m.d_model; ++k)
    if (!seen[k]) throw FunctionalError(fmt::format("{}: element {} of the slices never arrives", region->name, k));
  // The slices of the residual stream, as a scatter leaves them.
  stream = on_root_column(vector);
  return stream;
}

void Evaluator::State::run_region(size_t index, const Tokens& tokens, const ChunkObserver& observe) {
  r = index;
  region = &plan->regions[index];
  if (region->slices_in) each_token(tokens, [&](size_t, TokenState& t) { t.data = resliced(t.data); });
  run_block(0, tokens, &observe);
  for (TokenState* t : tokens)
    for (Piece& piece : t->data.at)
      for (float& v : piece.value) v = rounded(v);  // sent on in the activation format
}

Evaluator::Evaluator(const mapping::Plan& plan, const ModelWeights& weights, uint32_t sequences,
                     std::vector<DroppedPartialSum> faults, const mapping::Plan* prefill)
    : state_(std::make_unique<State>(plan, prefill, weights, sequences, std::move(faults))) {
  for (const mapping::Plan* p : {&plan, prefill}) {
    if (!p) continue;
    std::string why = unsupported_reason(*p);
    if (why.empty()) why = State::unregistered_elementwise(*p);
    if (!why.empty()) throw FunctionalError(why);
  }
}

Evaluator::~Evaluator() = default;

TokenResult Evaluator::step(uint32_t sequence, uint32_t token, uint64_t position, const StepObserver& observe) {
  State& s = *state_;
  s.use(s.decode);
  TokenState t;
  t.sequence = sequence;
  t.token = token;
  t.position = position;
  const State::Tokens tokens{&t};
  const ChunkObserver each = [&](size_t, const StepOutput& output) {
    if (observe) observe(output);
  };
  for (size_t r = 0; r < s.plan->regions.size(); ++r) s.run_region(r, tokens, each);
  return std::move(t.result);
}

std::vector<TokenResult> Evaluator::prefill_chunk(uint32_t sequence, uint64_t first_position,
                                                  const std::vector<uint32_t>& tokens, const ChunkObserver& observe) {
  State& s = *state_;
  if (!s.prefill) throw std::logic_error("prefill_chunk without a prefill plan");
  std::vector<TokenState> chunk(tokens.size());
  State::Tokens pointers;
  for (size_t k = 0; k < tokens.size(); ++k) {
    chunk[k].sequence = sequence;
    chunk[k].token = tokens[k];
    chunk[k].position = first_position + k;
    chunk[k].in_chunk = uint32_t(k);
    pointers.push_back(&chunk[k]);
  }
  s.use(*s.prefill);
  for (size_t r = 0; r < s.plan->regions.size(); ++r) s.run_region(r, pointers, observe);
  // The prefill plan ends at the last layer: each token's output takes the
  // decode plan's LM head for its final hidden state and logits.
  s.use(s.decode);
  for (size_t r = s.prefill->regions.size(); r < s.decode.regions.size(); ++r)
    for (size_t k = 0; k < chunk.size(); ++k)
      s.run_region(r, {&chunk[k]}, [&](size_t, const StepOutput& output) { observe(k, output); });
  std::vector<TokenResult> results;
  for (TokenState& t : chunk) results.push_back(std::move(t.result));
  return results;
}

uint64_t Evaluator::weight_floats() const {
  uint64_t n = 0;
  for (const auto& [key, block] : state_->blocks) n += block.size();
  return n;
}

uint64_t Evaluator::kv_floats() const {
  uint64_t n = 0;
  for (const auto& sequence : state_->kv_of)
    for (const auto& [key, entries] : sequence) n += entries.size() * 2 * state_->m.head_dim;
  return n;
}

uint64_t Evaluator::tiles_holding_weights() const {
  std::map<std::tuple<size_t, size_t, uint32_t, uint32_t>, bool> tiles;
  for (const auto& [key, block] : state_->blocks)
    tiles[{std::get<0>(key), std::get<1>(key), std::get<3>(key), std::get<4>(key)}] = true;
  return tiles.size();
}

}  // namespace wafersim::functional
