#pragma once
// What the evaluator's tiles hold and send: slices of vectors, attention
// partials and KV entries, and the walk of a reduction tree that combines
// them in the order the plan's programs do.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "mapping/line_tree.h"
#include "mapping/steps.h"

namespace wafersim::functional {

using mapping::FrontKind;

// A slice of a vector on one tile of a line (or the whole vector at the root).
struct Piece {
  std::vector<uint32_t> index;
  std::vector<float> value;
};
struct Data {
  FrontKind kind = FrontKind::Root;
  std::vector<Piece> at;  // Root: one piece; Column: per row i; Row: per column j
};

inline Piece whole(std::vector<float> values) {
  Piece piece;
  piece.value = std::move(values);
  piece.index.resize(piece.value.size());
  for (uint32_t k = 0; k < piece.index.size(); ++k) piece.index[k] = k;
  return piece;
}
inline Data at_root(std::vector<float> values) { return Data{FrontKind::Root, {whole(std::move(values))}}; }

inline uint64_t chunk_begin(uint64_t total, uint64_t parts, uint64_t index) {
  return index * (total / parts) + std::min(index, total % parts);
}
// `list` cut into `parts` near-equal runs of whole `unit`s (the first runs the longer).
inline std::vector<std::vector<uint32_t>> split(const std::vector<uint32_t>& list, uint32_t parts, uint32_t unit = 1) {
  const uint64_t units = (list.size() + unit - 1) / unit;
  std::vector<std::vector<uint32_t>> out(parts);
  for (uint32_t p = 0; p < parts; ++p) {
    const uint64_t begin = std::min<uint64_t>(list.size(), chunk_begin(units, parts, p) * unit);
    const uint64_t end = std::min<uint64_t>(list.size(), chunk_begin(units, parts, p + 1) * unit);
    out[p].assign(list.begin() + long(begin), list.begin() + long(end));
  }
  return out;
}
inline std::vector<uint32_t> iota(uint64_t begin, uint64_t end) {
  std::vector<uint32_t> out;
  for (uint64_t k = begin; k < end; ++k) out.push_back(uint32_t(k));
  return out;
}

// Evaluates a reduction tree exactly as line_tree() lays it out for the
// programs of `step`: node k combines, level by level, the subtrees of its
// children; a chain's successor has finished before its predecessor takes it
// in, so nodes go from the ends of the line towards its root. `drop` (a
// position) loses that node's message.
template <typename T, typename Combine>
T reduce_tree(std::vector<T> parts, const mapping::Step& step, Combine combine, int64_t drop) {
  const uint32_t n = uint32_t(parts.size());
  const uint32_t root = step.env().geo.line_root(n);
  const mapping::LineTree& tree = mapping::line_tree(n, root, step.tree_shape(n));
  uint32_t levels = 0;
  for (const mapping::LineRole& role : tree.roles)
    for (const mapping::LineRole::Child& child : role.children) levels = std::max(levels, child.level + 1);
  for (uint32_t level = 0; level < levels; ++level)
    for (uint32_t k : tree.order)
      for (const mapping::LineRole::Child& child : tree.roles[k].children)
        if (child.level == level && int64_t(child.position) != drop) combine(parts[k], parts[child.position]);
  return std::move(parts[root]);
}

// Flash-decoding partial of one query head: running max, sum and weighted values.
struct Partial {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0;
  std::vector<float> acc;
};
using Partials = std::map<uint32_t, Partial>;  // by query head

struct KvEntry {
  uint64_t position = 0;
  uint32_t kv_head = 0;
  std::vector<float> k, v;
  std::vector<uint32_t> dims;  // grid attention: the head dimensions k and v hold, in order (empty: all)
};

// (query head, position) -> score, and query head (or element) -> value: the
// partial results grid attention combines along rows and down columns.
using Scores = std::map<std::pair<uint32_t, uint64_t>, float>;
using ByIndex = std::map<uint32_t, float>;

}  // namespace wafersim::functional
