// The slices' re-cut between decode's groups order and the grid's (slice_exchange.h).
#include "mapping/slice_exchange.h"

#include <stdexcept>

#include "mapping/mesh_gemm.h"

namespace wafersim::mapping {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Colours: the multicast down the columns, the ring's two directions along the rows, then the gathers' levels.
constexpr uint32_t kDownPattern = 0, kRingPattern = 1, kTreePattern = 3;

class SliceExchange final : public SliceExchangeStep {
 public:
  SliceExchange(const StepEnv& env, bool to_grid, uint32_t kv_heads, uint32_t query_heads, uint32_t decode_copies,
                uint64_t slice_bytes)
      : SliceExchangeStep(whole_chunk(env), to_grid, KvGroups(kv_heads, query_heads, env.geo.cols, decode_copies)),
        lines_(kv_heads, query_heads, env.geo.cols),
        chunk_bytes_(slice_bytes * env.tokens),
        row_bytes_(slice_bytes * ceil_div(env.tokens, env.geo.rows)) {
    gather_.along_row = false;
    gather_.n = env.geo.rows;
    gather_.gather = true;
    gather_.bytes_per_position = row_bytes_;
    gather_.pattern = kTreePattern;
    gather_.tag = uint16_t(env.tag + 2);
    message_bytes(chunk_bytes_);
  }

  FrontKind input() const override { return FrontKind::Row; }
  FrontKind output() const override { return FrontKind::Row; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const BlockGeometry& g = env_.geo;
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), kDownPattern, chunk_bytes_, env_.tag, out);
    const uint32_t line = lines_.of[j], n = lines_.columns(line), p = j - lines_.start[line];
    if (n > 1) {
      const uint32_t next = interleaved_ring_next(p, n);
      out.push_back(send_local(0, int32_t(next) - int32_t(p), ring_pattern(p, next))
                        .bytes(message_bytes(ring_bytes(n)))
                        .tag(uint16_t(env_.tag + 1)));
      out.push_back(wait().tag(uint16_t(env_.tag + 1)).messages(1));
    }
    emit_tree(gather_, i, out);
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    if (row) return tree_signature(gather_, index, out);
    const uint32_t line = lines_.of[index];
    out.push_back(lines_.columns(line));
    out.push_back(index - lines_.start[line]);
  }

  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    const BlockGeometry& g = env_.geo;
    Front out{FrontKind::Row, {}, std::vector<Timed>(g.cols), {}};
    for (uint32_t line = 0; line < lines_.count; ++line) {
      const uint32_t start = lines_.start[line], n = lines_.columns(line);
      // arrived[p][i]: tile (i, start + p) holds the chunk's slice of its column.
      std::vector<std::vector<Timed>> arrived(n, std::vector<Timed>(g.rows));
      for (uint32_t p = 0; p < n; ++p)
        for (uint32_t i = 0; i < g.rows; ++i)
          arrived[p][i] = line_multicast_arrival(in.at[start + p], g.root_i(), i, chunk_bytes_, kDownPattern);
      std::vector<std::vector<Timed>> exchanged = arrived;
      for (uint32_t from = 0; n > 1 && from < n; ++from) {
        const uint32_t to = interleaved_ring_next(from, n), hops = to > from ? to - from : from - to;
        const uint64_t message = line_message_cycles(hops, ring_bytes(n), ring_pattern(from, to));
        for (uint32_t i = 0; i < g.rows; ++i)
          exchanged[to][i] = later(arrived[to][i], arrived[from][i].after(message, Category::Fabric));
      }
      for (uint32_t p = 0; p < n; ++p) out.at[start + p] = tree_time(gather_, std::move(exchanged[p]));
    }
    return out;
  }

  uint64_t activation_bytes(uint32_t i, uint32_t) const override {
    // Its rows' tokens as they come and as they leave; the root row the chunk's slice too.
    return 2 * row_bytes_ + (i == env_.geo.root_i() ? 2 * chunk_bytes_ : 0);
  }
  uint32_t patterns() const override { return kTreePattern + tree_patterns(env_.geo.rows); }
  uint16_t tags_used() const override { return uint16_t(2 + tree_patterns(env_.geo.rows)); }

 private:
  // What each column of a line of n forwards on its row: about a 1/n part of
  // every column's tokens passes each column between its owner and its destination.
  uint64_t ring_bytes(uint32_t n) const { return (row_bytes_ * (n - 1) + 1) / 2; }
  static uint32_t message_bytes(uint64_t bytes) {
    if (bytes > UINT32_MAX) throw std::logic_error("a slice exchange of the chunk exceeds 4 GiB");
    return uint32_t(bytes);
  }
  static uint32_t ring_pattern(uint32_t from, uint32_t to) { return to > from ? kRingPattern : kRingPattern + 1; }

  KvGroups lines_;        // the grid's groups: one line of the exchange each
  uint64_t chunk_bytes_;  // the chunk's slice of the largest column
  uint64_t row_bytes_;    // the part of it each row exchanges: ceil(chunk / rows) tokens
  Tree gather_;           // down each column to the root row
};

}  // namespace

std::unique_ptr<Step> slice_exchange_step(const StepEnv& env, bool to_grid, uint32_t kv_heads, uint32_t query_heads,
                                          uint32_t decode_copies, uint64_t slice_bytes) {
  return std::make_unique<SliceExchange>(env, to_grid, kv_heads, query_heads, decode_copies, slice_bytes);
}

}  // namespace wafersim::mapping
