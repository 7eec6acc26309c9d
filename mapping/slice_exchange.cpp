// The slices' re-cut between decode's groups order and the grid's (slice_exchange.h).
#include "mapping/slice_exchange.h"

#include <stdexcept>
#include <vector>

#include "mapping/mesh_gemm.h"

namespace wafersim::mapping {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Colours: the multicast down the columns, then the two directions of the
// rings along the rows and of those down the columns.
constexpr uint32_t kDownPattern = 0, kRowRingPattern = 1, kColumnRingPattern = 3;

class SliceExchange final : public SliceExchangeStep {
 public:
  SliceExchange(const StepEnv& env, bool to_grid, uint32_t kv_heads, uint32_t query_heads, uint32_t decode_copies,
                uint64_t slice_bytes)
      : SliceExchangeStep(whole_chunk(env), to_grid, KvGroups(kv_heads, query_heads, env.geo.cols, decode_copies)),
        chunk_bytes_(slice_bytes * env.tokens),
        row_bytes_(slice_bytes * ceil_div(env.tokens, env.geo.rows)) {
    message_bytes(chunk_bytes_);
  }

  FrontKind input() const override { return FrontKind::Row; }
  FrontKind output() const override { return FrontKind::Row; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const BlockGeometry& g = env_.geo;
    emit_line_multicast(g.rows, g.root_i(), i, g.down(), kDownPattern, chunk_bytes_, env_.tag, out);
    const uint32_t line = lines().of[j], n = lines().columns(line), p = j - lines().start[line];
    if (n > 1) {
      const uint32_t next = interleaved_ring_next(p, n);
      out.push_back(send_local(0, int32_t(next) - int32_t(p), ring_pattern(kRowRingPattern, p, next))
                        .bytes(message_bytes(row_ring_bytes(n)))
                        .tag(uint16_t(env_.tag + 1)));
      out.push_back(wait().tag(uint16_t(env_.tag + 1)).messages(1));
    }
    if (g.rows > 1) {
      const uint32_t next = interleaved_ring_next(i, g.rows);
      out.push_back(send_local(int32_t(next) - int32_t(i), 0, ring_pattern(kColumnRingPattern, i, next))
                        .bytes(message_bytes(column_ring_bytes()))
                        .tag(uint16_t(env_.tag + 2)));
      out.push_back(wait().tag(uint16_t(env_.tag + 2)).messages(1));
    }
  }
  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    out.push_back(index == root_index(row));
    const uint32_t n = row ? env_.geo.rows : lines().columns(lines().of[index]);
    const uint32_t p = row ? index : index - lines().start[lines().of[index]];
    // A ring's successor as an offset: tiles that differ only in their position share a program.
    out.push_back(uint64_t(int64_t(interleaved_ring_next(p, n)) - int64_t(p)));
    if (!row) out.push_back(n);
  }

  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    const BlockGeometry& g = env_.geo;
    Front out{FrontKind::Row, {}, std::vector<Timed>(g.cols), {}};
    const uint32_t root = g.root_i(), from_root = ring_predecessors(g.rows)[root];
    const uint64_t column_message = g.rows > 1 ? line_message_cycles(distance(root, from_root), column_ring_bytes(),
                                                                     ring_pattern(kColumnRingPattern, from_root, root))
                                               : 0;
    for (uint32_t line = 0; line < lines().count; ++line) {
      const uint32_t start = lines().start[line], n = lines().columns(line);
      const std::vector<uint32_t> row_from = ring_predecessors(n);
      // When tile (i, start + p) holds its row's re-cut tokens: the slice down
      // its column, then its predecessor's part along the row.
      auto exchanged = [&](uint32_t i, uint32_t p) {
        const Timed arrived = line_multicast_arrival(in.at[start + p], root, i, chunk_bytes_, kDownPattern);
        if (n < 2) return arrived;
        const uint32_t from = row_from[p];
        const Timed before = line_multicast_arrival(in.at[start + from], root, i, chunk_bytes_, kDownPattern);
        return later(arrived, before.after(line_message_cycles(distance(p, from), row_ring_bytes(n),
                                                               ring_pattern(kRowRingPattern, from, p)),
                                           Category::Fabric));
      };
      // The root row's tile is done once its column ring's predecessor's bytes are in.
      for (uint32_t p = 0; p < n; ++p) {
        const Timed own = exchanged(root, p);
        out.at[start + p] =
            g.rows > 1 ? later(own, exchanged(from_root, p).after(column_message, Category::Fabric)) : own;
      }
    }
    return out;
  }

  uint64_t activation_bytes(uint32_t i, uint32_t) const override {
    // Its rows' tokens as they come and as they leave, the chunk's re-cut
    // slice its column's ring brings; the root row the chunk's slice too.
    return 2 * row_bytes_ + chunk_bytes_ + (i == env_.geo.root_i() ? chunk_bytes_ : 0);
  }
  uint32_t patterns() const override { return kColumnRingPattern + 2; }
  uint16_t tags_used() const override { return 3; }

 private:
  static uint32_t distance(uint32_t a, uint32_t b) { return a > b ? a - b : b - a; }
  // Each position's predecessor on the interleaved ring of n.
  static std::vector<uint32_t> ring_predecessors(uint32_t n) {
    std::vector<uint32_t> from(n);
    for (uint32_t p = 0; p < n; ++p) from[interleaved_ring_next(p, n)] = p;
    return from;
  }
  // What each column of a line of n forwards on its row: about a 1/n part of
  // every column's tokens passes each column between its owner and its destination.
  uint64_t row_ring_bytes(uint32_t n) const { return (row_bytes_ * (n - 1) + 1) / 2; }
  // Down each column every row's re-cut tokens visit every row: each tile
  // forwards all but the part its successor holds.
  uint64_t column_ring_bytes() const { return row_bytes_ * (env_.geo.rows - 1); }
  static uint32_t message_bytes(uint64_t bytes) {
    if (bytes > UINT32_MAX) throw std::logic_error("a slice exchange of the chunk exceeds 4 GiB");
    return uint32_t(bytes);
  }
  static uint32_t ring_pattern(uint32_t first, uint32_t from, uint32_t to) { return to > from ? first : first + 1; }

  uint64_t chunk_bytes_;  // the chunk's slice of the largest column
  uint64_t row_bytes_;    // the part of it each row exchanges: ceil(chunk / rows) tokens
};

}  // namespace

std::unique_ptr<Step> slice_exchange_step(const StepEnv& env, bool to_grid, uint32_t kv_heads, uint32_t query_heads,
                                          uint32_t decode_copies, uint64_t slice_bytes) {
  return std::make_unique<SliceExchange>(env, to_grid, kv_heads, query_heads, decode_copies, slice_bytes);
}

}  // namespace wafersim::mapping
