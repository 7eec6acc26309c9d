// MeshGEMM step of a prefill projection (mesh_gemm.h): programs and closed form.
//
// Positions: l along the input line (rows for from_column, else columns), m
// across it. Tile (l, m) holds the decode GEMV's weight block for input slice
// l and output slice m. Patterns (colours at the busiest router): 0 the
// scatter multicast, 1 and 2 the input ring (its two directions), 3 and 4 the
// partial ring, 5... the levels of the gather tree.
#include "mapping/mesh_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "mapping/line_tree.h"
#include "workloads/op_costs.h"

namespace wafersim::mapping {

uint32_t interleaved_ring_next(uint32_t p, uint32_t n) {
  if (n <= 1) return 0;
  if (p % 2 == 0) {
    if (p + 2 < n) return p + 2;
    return p + 1 < n ? p + 1 : p - 1;  // the turn at the far end
  }
  return p >= 3 ? p - 2 : 0;
}

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t share(uint64_t total, uint64_t parts, uint64_t index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

// The compiler caps the chunk so that every message fits a task (prefill_plan.cpp):
// no MeshGEMM message outgrows the chunked GEMV's partial sums.
uint32_t message_bytes(uint64_t bytes) {
  if (bytes > UINT32_MAX) throw std::logic_error("a MeshGEMM message of the chunk exceeds 4 GiB");
  return uint32_t(bytes);
}

// The gather tree's blocks of the chunk's tokens (tree_.bytes_per_position): one per position of the output line.
uint32_t chunk_block_tokens(const StepEnv& env, bool from_column) {
  return uint32_t(ceil_div(env.tokens, from_column ? env.geo.rows : env.geo.cols));
}

constexpr uint32_t kScatterPattern = 0, kInputRingPattern = 1, kPartialRingPattern = 3, kTreePattern = 5;

class MeshGemm final : public MeshGemmStep {
 public:
  MeshGemm(const StepEnv& env, const GemvShape& shape, bool from_column)
      : MeshGemmStep(whole_chunk(env), from_column, chunk_block_tokens(env, from_column)),
        shape_(shape),
        tokens_(env.tokens) {
    const BlockGeometry& g = env.geo;
    lines_ = from_column ? g.rows : g.cols;
    spread_ = from_column ? g.cols : g.rows;
    block_in_ = ceil_div(shape.d_in, lines_);
    block_out_ = ceil_div(shape.d_out, spread_);
    // A round moves one token block; never more rounds than tokens.
    const uint64_t rounds = std::min<uint64_t>(tokens_, std::max(lines_, spread_));
    first_tokens_ = ceil_div(tokens_, rounds);
    const uint64_t in_elements = uint64_t(tokens_) * block_in_;
    scatter_bytes_ = dtype_bytes(env.activation, in_elements);
    // Every input block visits each of the spread_ tiles of its ring once, every
    // partial each of the lines_ tiles of its ring: a tile forwards all but its own share.
    input_ring_bytes_ = spread_ > 1 ? dtype_bytes(env.activation, ceil_div(in_elements * (spread_ - 1), spread_)) : 0;
    partial_ring_bytes_ =
        lines_ > 1
            ? dtype_bytes(env.partial_sum, ceil_div(uint64_t(tokens_) * block_out_ * (lines_ - 1), uint64_t(lines_)))
            : 0;
    tree_.along_row = !from_column;
    tree_.n = lines_;
    tree_.tag = uint16_t(env.tag + 3);
    tree_.pattern = kTreePattern;
    tree_.gather = true;
    tree_.bytes_per_position =
        dtype_bytes(env.partial_sum, ceil_div(tokens_, lines_) * block_out_);  // as the GEMV leaves them
    const Work one = block(false), one_bias = block(shape.bias);
    const uint64_t rest_tokens = tokens_ - first_tokens_;
    const Work first_instructions = round_instructions(first_tokens_, env.vector_instruction_elements);
    const Work rest_instructions = round_instructions(rest_tokens, env.vector_instruction_elements);
    first_ = one * first_tokens_ + first_instructions;
    first_bias_ = one_bias * first_tokens_ + first_instructions;
    rest_ = one * rest_tokens + rest_instructions;
    rest_bias_ = one_bias * rest_tokens + rest_instructions;
  }

  FrontKind input() const override { return from_column() ? FrontKind::Column : FrontKind::Row; }
  FrontKind output() const override { return from_column() ? FrontKind::Row : FrontKind::Column; }

  void emit(uint32_t i, uint32_t j, std::vector<Task>& out) const override {
    const uint32_t l = from_column() ? i : j, m = from_column() ? j : i;
    const BlockGeometry& g = env_.geo;
    emit_line_multicast(spread_, g.line_root(spread_), m, from_column() ? g.across() : g.down(), kScatterPattern,
                        message_bytes(scatter_bytes_), env_.tag, out);
    const bool bias = l == g.line_root(lines_);
    out.push_back(compute().work(bias ? first_bias_ : first_).dtype(shape_.weight));
    if (spread_ > 1) {
      const uint32_t next = interleaved_ring_next(m, spread_);
      out.push_back(move(0, int32_t(next) - int32_t(m), ring_pattern(kInputRingPattern, m, next))
                        .bytes(message_bytes(input_ring_bytes_))
                        .tag(uint16_t(env_.tag + 1)));
    }
    if (lines_ > 1) {
      const uint32_t next = interleaved_ring_next(l, lines_);
      out.push_back(move(int32_t(next) - int32_t(l), 0, ring_pattern(kPartialRingPattern, l, next))
                        .bytes(message_bytes(partial_ring_bytes_))
                        .tag(uint16_t(env_.tag + 2)));
    }
    if (tokens_ > first_tokens_) out.push_back(compute().work(bias ? rest_bias_ : rest_).dtype(shape_.weight));
    if (spread_ > 1) out.push_back(wait().tag(uint16_t(env_.tag + 1)).messages(1));
    if (lines_ > 1) {
      out.push_back(wait().tag(uint16_t(env_.tag + 2)).messages(1));
      emit_tree(tree_, l, out);
    }
  }

  void signature(bool row, uint32_t index, std::vector<uint64_t>& out) const override {
    const bool along_line = row == from_column();  // index is a position l
    // The ring successor as an offset: tiles that differ only in their position share a program.
    auto ring_offset = [&](uint32_t n) { return uint64_t(int64_t(interleaved_ring_next(index, n)) - int64_t(index)); };
    out.push_back(index == root_index(row));
    if (along_line) {
      out.push_back(ring_offset(lines_));
      tree_signature(tree_, index, out);
    } else {
      out.push_back(ring_offset(spread_));
    }
  }

  Front latency(const Front& in, const IterationInputs&, uint64_t) const override {
    // Tile (l, m) starts when the scatter reaches it: in.at[l] + reach(m). Its
    // end is the later of its own compute, its input ring predecessor's message
    // and its partial ring predecessor's; everything but the scatter is the
    // same along a line, so done(l, m) = reach(m) + a term that depends on m
    // only through the input ring's (predecessor's reach - reach(m) + message),
    // which takes a handful of values: one gather tree per value.
    std::vector<uint32_t> input_from(spread_), partial_from(lines_);
    for (uint32_t p = 0; p < spread_; ++p) input_from[interleaved_ring_next(p, spread_)] = p;
    for (uint32_t p = 0; p < lines_; ++p) partial_from[interleaved_ring_next(p, lines_)] = p;
    const uint32_t scatter_root = env_.geo.line_root(spread_), bias_line = env_.geo.line_root(lines_);
    auto reach = [&](uint32_t m) -> uint64_t {
      const uint32_t hops = m > scatter_root ? m - scatter_root : scatter_root - m;
      return hops == 0 ? 0 : line_message_cycles(hops, scatter_bytes_, kScatterPattern);
    };
    auto first_cycles = [&](uint32_t l) { return cycles(shape_.weight, l == bias_line ? first_bias_ : first_); };
    auto rest_cycles = [&](uint32_t l) {
      return tokens_ > first_tokens_ ? cycles(shape_.weight, l == bias_line ? rest_bias_ : rest_) : 0;
    };
    std::map<int64_t, Timed> by_class;  // input ring term (relative to reach(m)) -> the gathered result
    Front out{output(), {}, std::vector<Timed>(spread_), {}};
    for (uint32_t m = 0; m < spread_; ++m) {
      int64_t key = -1;  // no input ring
      if (spread_ > 1) {
        const uint32_t from = input_from[m];
        const uint32_t hops = uint32_t(std::abs(int32_t(m) - int32_t(from)));
        const uint64_t message = line_message_cycles(hops, input_ring_bytes_, ring_pattern(kInputRingPattern, from, m));
        key = int64_t(reach(from) + message) - int64_t(reach(m));
      }
      auto [it, fresh] = by_class.try_emplace(key);
      if (fresh) {
        std::vector<Timed> done(lines_);
        for (uint32_t l = 0; l < lines_; ++l) {
          const Timed& start = in.at[l];
          Timed end = start.after(first_cycles(l) + rest_cycles(l), Category::Compute);
          if (key >= 0)
            end = later(end, start.after(first_cycles(l), Category::Compute).after(uint64_t(key), Category::Fabric));
          if (lines_ > 1) {
            const uint32_t from = partial_from[l];
            const uint32_t hops = uint32_t(std::abs(int32_t(l) - int32_t(from)));
            end = later(end, in.at[from]
                                 .after(first_cycles(from), Category::Compute)
                                 .after(line_message_cycles(hops, partial_ring_bytes_,
                                                            ring_pattern(kPartialRingPattern, from, l)),
                                        Category::Fabric));
          }
          done[l] = end;
        }
        it->second = lines_ > 1 ? tree_time(tree_, std::move(done)) : done[0];
      }
      out.at[m] = it->second.after(reach(m), Category::Fabric);
    }
    return out;
  }

  uint64_t weight_elements(uint32_t i, uint32_t j) const override {
    const uint32_t l = from_column() ? i : j, m = from_column() ? j : i;
    return share(shape_.d_in, lines_, l) * share(shape_.d_out, spread_, m);
  }
  Dtype weight_dtype() const override { return shape_.weight; }
  uint64_t bias_elements(uint32_t i, uint32_t j) const override {
    const uint32_t l = from_column() ? i : j, m = from_column() ? j : i;
    return shape_.bias && l == env_.geo.line_root(lines_) ? share(shape_.d_out, spread_, m) : 0;
  }
  Dtype bias_dtype() const override { return shape_.bias_dtype; }
  uint64_t total_weight_elements() const override { return shape_.elements(); }
  uint64_t total_weight_bytes() const override { return shape_.bytes(); }
  uint64_t activation_bytes(uint32_t i, uint32_t j) const override {
    // A tile's token block of the input and of the partial sums, each with the
    // one its ring brings; on the output line the chunk's gathered sums.
    const uint32_t l = from_column() ? i : j;
    const uint64_t input_block = ceil_div(tokens_, spread_) * block_in_;
    const uint64_t partial_block = ceil_div(tokens_, lines_) * block_out_;
    const uint64_t sums = l == env_.geo.line_root(lines_) ? uint64_t(tokens_) * block_out_ : 0;
    return 2 * dtype_bytes(env_.activation, input_block) + dtype_bytes(env_.partial_sum, 2 * partial_block + sums);
  }
  uint32_t patterns() const override { return kTreePattern + tree_patterns(lines_); }
  uint16_t tags_used() const override { return uint16_t(3 + tree_levels(lines_, env_.fanin)); }

 private:
  // One token's product of a tile's weight block, as the decode GEMV costs it
  // (its instructions are the rounds', round_instructions).
  Work block(bool bias) const {
    return Work{workloads::matmul_flops(block_in_, block_out_, bias),
                dtype_bytes(shape_.weight, block_in_ * block_out_) +
                    (bias ? dtype_bytes(shape_.bias_dtype, block_out_) : 0) + dtype_bytes(env_.activation, block_in_),
                dtype_bytes(env_.partial_sum, block_out_), 0};
  }
  // The vector instructions of the rounds that carry `tokens` tokens, each
  // round a block of first_tokens_ (the last one what is left), in WaferLLM's
  // MeshGEMM loop (MeshInfra/WaferLLM, Prefill/WSE-2/src/prefill.csl,
  // mm_computation): for each weight element of the tile's block, one
  // multiply-add over the round's token block, in instructions of at most
  // `elements` tokens (0: the whole block). The decode GEMV's loop instead
  // issues one instruction per input over the outputs, once per token.
  Work round_instructions(uint64_t tokens, uint64_t elements) const {
    auto per_weight = [&](uint64_t round_tokens) { return elements == 0 ? 1 : ceil_div(round_tokens, elements); };
    const uint64_t full_rounds = tokens / first_tokens_, last_tokens = tokens % first_tokens_;
    const uint64_t per_weight_total =
        full_rounds * per_weight(first_tokens_) + (last_tokens > 0 ? per_weight(last_tokens) : 0);
    Work work;
    work.vector_instructions = block_in_ * block_out_ * per_weight_total;
    return work;
  }
  // A ring's two directions take two patterns: forward (to a larger position) and back.
  static uint32_t ring_pattern(uint32_t first, uint32_t from, uint32_t to) { return to > from ? first : first + 1; }
  // A send dl positions along the line and dm across it.
  SendTask move(int32_t dl, int32_t dm, uint32_t pattern) const {
    return from_column() ? send_local(dl, dm, pattern) : send_local(dm, dl, pattern);
  }

  GemvShape shape_;
  uint32_t tokens_;
  uint32_t lines_ = 1, spread_ = 1;
  uint64_t block_in_ = 0, block_out_ = 0, first_tokens_ = 1;
  uint64_t scatter_bytes_ = 0, input_ring_bytes_ = 0, partial_ring_bytes_ = 0;
  Tree tree_;
  Work first_, first_bias_, rest_, rest_bias_;
};

}  // namespace

std::unique_ptr<Step> mesh_gemm_step(const StepEnv& env, const GemvShape& shape, bool from_column) {
  return std::make_unique<MeshGemm>(env, shape, from_column);
}

}  // namespace wafersim::mapping
