// Attention as the plan lays it out: the flash-decoding partials of each KV
// group (mapping.attention: groups) or WaferLLM's grid of head dimensions by
// positions (mapping.attention: grid), with the KV entries each tile keeps.
#include <algorithm>
#include <cmath>

#include "sim/functional/evaluator_state.h"
#include "sim/functional/reference.h"

namespace wafersim::functional {

void Evaluator::State::merge(Partials& into, const Partials& from) const {
  for (const auto& [head, sent] : from) {
    Partial b = sent;
    for (float& v : b.acc) v = rounded(v);  // the weighted sum travels in the activation format
    auto [it, fresh] = into.try_emplace(head, b);
    if (fresh) continue;
    Partial& a = it->second;
    const float top = std::max(a.max, b.max);
    const float fa = std::exp(a.max - top), fb = std::exp(b.max - top);
    a.sum = a.sum * fa + b.sum * fb;
    for (size_t e = 0; e < a.acc.size(); ++e) a.acc[e] = a.acc[e] * fa + b.acc[e] * fb;
    a.max = top;
  }
}

// Attention of the KV heads [first, last) with the query heads `queries` on
// the columns [start, end) of their group, q/k/v in `qkv` (by qkv index): the
// new entry stored, every tile's partials over its positions, reduced down
// each column. With KvPass::Store only the entry is stored (nothing is returned).
std::vector<Partials> Evaluator::State::column_partials(const std::vector<float>& qkv, uint32_t first, uint32_t last,
                                                        std::pair<uint32_t, uint32_t> queries, uint32_t start,
                                                        uint32_t end, uint32_t window, KvPass pass) {
  const BlockGeometry& g = geo();
  const uint32_t hd = m.head_dim, q_per_kv = m.n_heads / m.n_kv_heads;
  const uint64_t nq = uint64_t(m.n_heads) * hd, nkv = uint64_t(m.n_kv_heads) * hd;
  const uint64_t group_tiles = uint64_t(end - start) * g.rows;
  // The new key and value go to the tile whose share holds this position.
  bool stored = pass != KvPass::Store;
  for (uint32_t j = start; j < end && !stored; ++j)
    for (uint32_t i = 0; i < g.rows && !stored; ++i) {
      if (step->kv_offset(i, j) != position % group_tiles) continue;
      std::vector<KvEntry>& held = kv_of[sequence][{r, i, j, KvLayout::Groups}];
      for (uint32_t h = first; h < last; ++h) {
        KvEntry entry{position, h, std::vector<float>(hd), std::vector<float>(hd), {}};
        for (uint32_t e = 0; e < hd; ++e) {
          entry.k[e] = round_to(kv, qkv[nq + h * hd + e]);
          entry.v[e] = round_to(kv, qkv[nq + nkv + h * hd + e]);
        }
        held.push_back(std::move(entry));
      }
      stored = true;
    }
  if (!stored) fail(fmt::format("no tile of columns {}..{} holds position {}", start, end - 1, position));
  if (pass == KvPass::Store) return {};
  const uint64_t oldest = window > 0 && position + 1 > window ? position + 1 - window : 0;
  const float inverse_sqrt = 1.0f / std::sqrt(float(hd));
  std::vector<Partials> columns;
  uint64_t attended = 0;  // entries the group's tiles attend to for its first query head
  for (uint32_t j = start; j < end; ++j) {
    std::vector<Partials> rows(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i) {
      const auto held = kv_of[sequence].find({r, i, j, KvLayout::Groups});
      if (held == kv_of[sequence].end()) continue;
      for (uint32_t h = queries.first; h < queries.second; ++h) {
        Partial partial;
        partial.acc.assign(hd, 0.0f);
        std::vector<std::pair<float, const KvEntry*>> scores;
        for (const KvEntry& entry : held->second) {
          if (entry.kv_head != h / q_per_kv || entry.position < oldest || entry.position > position) continue;
          // Entries another plan stored (the prefill's, read by decode) must sit where this step reads them.
          if (entry.position % group_tiles != step->kv_offset(i, j))
            fail(fmt::format("{} holds the KV entry of position {}, which this step's shares put elsewhere",
                             tile_name(i, j), entry.position));
          if (h == queries.first) ++attended;
          float dot = 0;
          for (uint32_t e = 0; e < hd; ++e) dot += qkv[h * hd + e] * entry.k[e];
          scores.emplace_back(dot * inverse_sqrt, &entry);
          partial.max = std::max(partial.max, dot * inverse_sqrt);
        }
        if (scores.empty()) continue;
        for (const auto& [score, entry] : scores) {
          const float p = std::exp(score - partial.max);
          partial.sum += p;
          for (uint32_t e = 0; e < hd; ++e) partial.acc[e] += p * entry->v[e];
        }
        rows[i][h] = std::move(partial);
      }
    }
    columns.push_back(reduce_tree(std::move(rows), *step, merger(), dropped(j)));
  }
  // Every position from the window's oldest on, once: an entry another plan
  // should have stored (the prefill's KV move) and did not is named here.
  if (first < last && attended != position + 1 - oldest)
    fail(fmt::format("columns {}..{} hold {} KV entries of KV head {} for positions {}..{}", start, end - 1, attended,
                     first, oldest, position));
  return columns;
}

void Evaluator::State::move_kv_entry(const KvEntry& entry, const mapping::KvGroups& decode) {
  const BlockGeometry& g = geo();
  for (uint32_t group = 0; group < decode.count; ++group) {
    const auto [first, last] = decode.kv_head_range(group);
    if (entry.kv_head < first || entry.kv_head >= last) continue;
    // Decode's share: offset (j - start) x rows + i of the group's tiles (mapping/steps.cpp, Attention::kv_offset).
    const uint64_t offset = entry.position % (uint64_t(decode.columns(group)) * g.rows);
    const uint32_t i = uint32_t(offset % g.rows), j = decode.start[group] + uint32_t(offset / g.rows);
    if (i != entry.position % g.rows)
      fail(fmt::format("the KV entry of position {} would leave its row for row {}", entry.position, i));
    kv_of[sequence][{r, i, j, KvLayout::Groups}].push_back(entry);
  }
}

std::function<void(Partials&, const Partials&)> Evaluator::State::merger() const {
  return [this](Partials& a, const Partials& b) { merge(a, b); };
}

// Where the partials are combined (the root, or a group's first column) the
// sink logits join the softmax's denominator, as the plan's sink work there does.
std::vector<float> Evaluator::State::head_outputs(const Partials& partials, uint32_t first_head, uint32_t last_head,
                                                  bool sinks) const {
  const uint32_t hd = m.head_dim;
  std::vector<float> out;
  for (uint32_t h = first_head; h < last_head; ++h) {
    const auto found = partials.find(h);
    if (found == partials.end()) fail(fmt::format("query head {} has no attention partials", h));
    Partial p = found->second;
    if (sinks) {
      const float sink = w.sink(region->layer, h), top = std::max(p.max, sink), scale = std::exp(p.max - top);
      p.sum = p.sum * scale + std::exp(sink - top);
      for (float& v : p.acc) v *= scale;
    }
    for (uint32_t e = 0; e < hd; ++e) out.push_back(rounded(p.acc[e] / p.sum));
  }
  return out;
}

// Lines of the attention trees for DroppedPartialSum: column j's tree is line
// j; the tree along the root row (root input) or along group g is line cols + g.
Data Evaluator::State::attention(const Data& in, const mapping::AttentionStep& attention, KvPass pass) {
  const BlockGeometry& g = geo();
  const mapping::KvGroups& groups = attention.groups();
  const std::vector<uint32_t>& start = attention.group_start();
  const uint32_t hd = m.head_dim;
  if (!attention.row_io()) {
    // Down each column, then along the root row: one group's partials combine, groups are gathered.
    std::vector<Partials> columns(g.cols);
    for (uint32_t group = 0; group < groups.count; ++group) {
      const auto [first, last] = groups.kv_head_range(group);
      if (first >= last) continue;
      std::vector<Partials> partials = column_partials(in.at[0].value, first, last, groups.query_range(group),
                                                       start[group], start[group + 1], attention.window(), pass);
      if (pass == KvPass::Store) continue;
      for (uint32_t p = 0; p < partials.size(); ++p) columns[start[group] + p] = std::move(partials[p]);
    }
    if (pass == KvPass::Store) return in;
    const Partials all = reduce_tree(std::move(columns), *step, merger(), dropped(g.cols));
    return at_root(head_outputs(all, 0, m.n_heads, attention.sinks()));
  }
  Data out{FrontKind::Row, std::vector<Piece>(g.cols)};
  std::vector<float> first_copy;  // what the first copy of the current KV heads gathered
  for (uint32_t group = 0; group < groups.count; ++group) {
    const auto [first, last] = groups.kv_head_range(group);
    const auto [q_first, q_last] = groups.query_range(group);
    const uint32_t columns = start[group + 1] - start[group];
    if (first >= last) continue;
    // The group's slices gathered to its first column.
    std::vector<std::vector<Piece>> parts;
    for (uint32_t j = start[group]; j < start[group + 1]; ++j) parts.push_back({in.at[j]});
    auto append = [](std::vector<Piece>& a, const std::vector<Piece>& b) { a.insert(a.end(), b.begin(), b.end()); };
    const std::vector<Piece> gathered = reduce_tree(std::move(parts), *step, append, -1);
    std::vector<float> qkv(qkv_size(m), NAN);
    for (const Piece& piece : gathered)
      for (size_t k = 0; k < piece.index.size(); ++k) qkv[piece.index[k]] = piece.value[k];
    // The other copies take the key and value the first copy multicasts along them.
    if (groups.first_copy(group) == group) {
      first_copy = qkv;
    } else {
      for (uint32_t index : qkv_elements(0, 0, first, last)) qkv[index] = first_copy[index];
    }
    for (uint32_t index : qkv_elements(q_first, q_last, first, last))
      if (std::isnan(qkv[index]))
        fail(fmt::format("q/k/v element {} is not gathered to column {}", index, start[group]));
    std::vector<Partials> partials =
        column_partials(qkv, first, last, {q_first, q_last}, start[group], start[group + 1], attention.window(), pass);
    if (pass == KvPass::Store) continue;
    const Partials combined = reduce_tree(std::move(partials), *step, merger(), dropped(g.cols + group));
    const std::vector<float> values = head_outputs(combined, q_first, q_last, attention.sinks());
    // The group's output multicast along its columns: column p keeps slice p.
    const auto cuts = split(iota(uint64_t(q_first) * hd, uint64_t(q_last) * hd), columns);
    for (uint32_t p = 0; p < columns; ++p)
      for (uint32_t index : cuts[p]) {
        out.at[start[group] + p].index.push_back(index);
        out.at[start[group] + p].value.push_back(values[index - q_first * hd]);
      }
  }
  return out;
}

// Within each KV-head group, column p holds the dimensions grid_dims() gives
// it of the group's queries, keys and values, and row i the positions
// p % rows == i. Every row sums its tiles' partial scores along the group's
// columns (in the partial-sum format); then, down each column, the maximum
// and the sum of the softmax combine (fp32), and so do the tiles' weighted
// values (in the partial-sum format): root-row tile j keeps output slice j.
// Lines for DroppedPartialSum: column j's output tree is line j; the score
// sum of row i of group g is line cols + g * rows + i.
Data Evaluator::State::grid_attention(const Data& in, const mapping::GridAttentionStep& attention, KvPass pass) {
  const BlockGeometry& g = geo();
  const std::vector<uint32_t>& start = attention.group_start();
  const uint32_t window = attention.window();
  const uint32_t groups = uint32_t(start.size() - 1), q_per_kv = m.n_heads / m.n_kv_heads, hd = m.head_dim;
  const uint64_t nq = uint64_t(m.n_heads) * hd, nkv = uint64_t(m.n_kv_heads) * hd;
  const uint64_t oldest = window > 0 && position + 1 > window ? position + 1 - window : 0;
  const float inverse_sqrt = 1.0f / std::sqrt(float(hd));
  auto add_in = [this](auto& into, const auto& from) {
    for (const auto& [key, value] : from) {
      auto [it, fresh] = into.try_emplace(key, value);
      if (!fresh) it->second = round_to(partial, it->second + value);
    }
  };
  Data out{FrontKind::Row, std::vector<Piece>(g.cols)};
  for (uint32_t group = 0; group < groups; ++group) {
    const auto [first, last] = attention.groups().kv_head_range(group);
    if (first >= last) continue;
    const uint32_t columns = start[group + 1] - start[group];
    const auto dims = grid_dims(first, last, columns);
    // The dimensions of KV head h that column p holds, in order.
    auto head_dims = [&](uint32_t p, uint32_t h) {
      std::vector<uint32_t> list;
      for (uint32_t t : dims[p])
        if (t / hd == h) list.push_back(t % hd);
      return list;
    };
    std::vector<ByIndex> slice(columns);  // q/k/v by index, as the QKV step left them on the root row
    for (uint32_t p = 0; p < columns; ++p) {
      const Piece& piece = in.at[start[group] + p];
      for (size_t k = 0; k < piece.index.size(); ++k) slice[p][piece.index[k]] = piece.value[k];
    }
    auto element = [&](uint32_t p, uint64_t index) {
      const auto found = slice[p].find(uint32_t(index));
      if (found == slice[p].end()) fail(fmt::format("q/k/v element {} is not on column {}", index, start[group] + p));
      return found->second;
    };
    if (pass == KvPass::Store) {  // every column keeps its dimensions of the new key and value
      for (uint32_t h = first; h < last; ++h) {
        KvEntry whole{position, h, std::vector<float>(hd), std::vector<float>(hd), {}};
        for (uint32_t p = 0; p < columns; ++p) {
          KvEntry entry{position, h, {}, {}, head_dims(p, h)};
          for (uint32_t d : entry.dims) {
            entry.k.push_back(round_to(kv, element(p, nq + uint64_t(h) * hd + d)));
            entry.v.push_back(round_to(kv, element(p, nq + nkv + uint64_t(h) * hd + d)));
            whole.k[d] = entry.k.back();
            whole.v[d] = entry.v.back();
          }
          if (!entry.dims.empty())
            kv_of[sequence][{r, uint32_t(position % g.rows), start[group] + p, KvLayout::Grid}].push_back(
                std::move(entry));
        }
        // The KV move: the row's columns gather their parts, the whole entry goes to decode's tiles.
        if (attention.kv_move()) move_kv_entry(whole, *attention.kv_move());
      }
      continue;
    }
    // The entries tile (i, start + p) attends to, checked against where this step's shares put them.
    auto attended = [&](uint32_t i, uint32_t p) {
      std::vector<const KvEntry*> list;
      const auto held = kv_of[sequence].find({r, i, start[group] + p, KvLayout::Grid});
      if (held == kv_of[sequence].end()) return list;
      for (const KvEntry& entry : held->second) {
        if (entry.kv_head < first || entry.kv_head >= last || entry.position < oldest || entry.position > position)
          continue;
        if (entry.position % g.rows != i || entry.dims != head_dims(p, entry.kv_head))
          fail(fmt::format("{} holds the KV entry of position {}, which this step's shares put elsewhere",
                           tile_name(i, start[group] + p), entry.position));
        list.push_back(&entry);
      }
      return list;
    };
    std::vector<Scores> scores(g.rows);  // row i's summed scores, scaled
    for (uint32_t i = 0; i < g.rows; ++i) {
      std::vector<Scores> parts(columns);
      for (uint32_t p = 0; p < columns; ++p)
        for (const KvEntry* entry : attended(i, p))
          for (uint32_t q = 0; q < q_per_kv; ++q) {
            const uint32_t head = entry->kv_head * q_per_kv + q;
            float dot = 0;
            for (size_t k = 0; k < entry->dims.size(); ++k)
              dot += element(p, uint64_t(head) * hd + entry->dims[k]) * entry->k[k];
            parts[p][{head, entry->position}] = round_to(partial, dot);
          }
      scores[i] = reduce_tree(std::move(parts), *step, add_in, dropped(g.cols + group * g.rows + i));
      for (auto& [key, score] : scores[i]) score *= inverse_sqrt;
    }
    // Every column repeats the softmax over its rows' scores; max and sum in fp32.
    std::vector<ByIndex> maxima(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i)
      for (const auto& [key, score] : scores[i]) {
        auto [it, fresh] = maxima[i].try_emplace(key.first, score);
        if (!fresh) it->second = std::max(it->second, score);
      }
    const ByIndex top = reduce_tree(
        std::move(maxima), *step,
        [](ByIndex& a, const ByIndex& b) {
          for (const auto& [head, value] : b) {
            auto [it, fresh] = a.try_emplace(head, value);
            if (!fresh) it->second = std::max(it->second, value);
          }
        },
        -1);
    std::vector<ByIndex> sums(g.rows);
    for (uint32_t i = 0; i < g.rows; ++i)
      for (const auto& [key, score] : scores[i]) sums[i][key.first] += std::exp(score - top.at(key.first));
    ByIndex total = reduce_tree(
        std::move(sums), *step,
        [](ByIndex& a, const ByIndex& b) {
          for (const auto& [head, value] : b) a[head] += value;
        },
        -1);
    if (attention.sinks())
      for (auto& [head, sum] : total) sum += std::exp(w.sink(region->layer, head) - top.at(head));
    for (uint32_t p = 0; p < columns; ++p) {
      const uint32_t j = start[group] + p;
      std::vector<ByIndex> weighted(g.rows);  // by output element head * head_dim + d
      for (uint32_t i = 0; i < g.rows; ++i) {
        for (const KvEntry* entry : attended(i, p))
          for (uint32_t q = 0; q < q_per_kv; ++q) {
            const uint32_t head = entry->kv_head * q_per_kv + q;
            const float weight = std::exp(scores[i].at({head, entry->position}) - top.at(head)) / total.at(head);
            for (size_t k = 0; k < entry->dims.size(); ++k)
              weighted[i][head * hd + entry->dims[k]] += weight * entry->v[k];
          }
        for (auto& [index, value] : weighted[i]) value = round_to(partial, value);
      }
      const ByIndex summed = reduce_tree(std::move(weighted), *step, add_in, dropped(j));
      for (uint32_t h = first; h < last; ++h)
        for (uint32_t q = 0; q < q_per_kv; ++q)
          for (uint32_t d : head_dims(p, h)) {
            const uint32_t index = (h * q_per_kv + q) * hd + d;
            const auto found = summed.find(index);
            if (found == summed.end()) fail(fmt::format("no tile of column {} attends for output {}", j, index));
            out.at[j].index.push_back(index);
            out.at[j].value.push_back(rounded(found->second));
          }
    }
  }
  return out;
}

}  // namespace wafersim::functional
