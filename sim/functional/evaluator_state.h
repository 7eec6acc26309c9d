#pragma once
// The evaluator's state and the steps it evaluates, shared by its files
// (evaluator.cpp: the chain of steps, norms, GEMVs, gathers and the chunk
// driver; evaluator_elementwise.cpp: the element-wise steps;
// evaluator_attention.cpp: both attention layouts). Private to them.
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "mapping/grid_attention.h"
#include "sim/functional/evaluator.h"
#include "sim/functional/tile_data.h"

namespace wafersim::functional {

using mapping::BlockGeometry;
using mapping::Region;
using mapping::Step;
using workloads::ModelSpec;

// A token's own state while a chunk passes a region step by step: the
// evaluator swaps it in for each step the token takes.
struct TokenState {
  uint32_t sequence = 0, token = 0;
  uint64_t position = 0;
  uint32_t in_chunk = 0;  // the token's index in its chunk (0 in decode)
  TokenResult result;
  std::vector<float> normed;
  std::map<uint32_t, float> routing;
  Data stream, qkv_slices, attn_input;
  Data data;  // what the last step left
};

// An attention step over a chunk: every token's key and value are stored
// first, then every token attends (causally) over what the tiles hold.
enum class KvPass { Store, Attend };

// Whose entries a tile's KV store holds: the groups' (whole entries) or the grid's (runs of head dimensions).
enum class KvLayout { Groups, Grid };

struct Evaluator::State {
  const mapping::Plan& decode;
  const mapping::Plan* prefill;
  const mapping::Plan* plan = nullptr;  // the one being evaluated
  const char* phase = "decode";
  const ModelWeights& w;
  const ModelSpec& m;
  Dtype act, kv, partial;
  std::vector<DroppedPartialSum> faults;
  // Weight blocks by (region, block, step label, i, j): the prefill plan's
  // regions are the decode plan's (the same tiles keep the same blocks), so
  // both plans read one set and a tile whose block differs between them fails.
  std::map<std::tuple<size_t, size_t, std::string, uint32_t, uint32_t>, std::vector<float>> blocks;
  // KV entries per sequence, per (region, i, j, layout): a prefill laid out
  // as the grid under decode's groups keeps the grid's entries apart from
  // decode's cache, which only its KV move writes (grid_attention.h).
  std::vector<std::map<std::tuple<size_t, uint32_t, uint32_t, KvLayout>, std::vector<KvEntry>>> kv_of;

  // The token being evaluated (swap_token).
  uint32_t sequence = 0, token = 0;
  uint64_t position = 0;
  uint32_t in_chunk = 0;
  TokenResult result;

  // The step being evaluated.
  size_t r = 0, block_index = 0, s = 0;
  const Region* region = nullptr;
  const mapping::Block* block = nullptr;  // block_index 0: the region's main block, then its experts
  const Step* step = nullptr;
  std::vector<float> normed;          // an MoE layer's MLP input, which its experts take
  std::map<uint32_t, float> routing;  // the routed experts picked for the token, with their weights
  Data stream;                        // the residual stream of a layer region: at the root, or as root-column slices
  Data qkv_slices;                    // the QKV sums while their q/k norm statistics are reduced
  Data attn_input;                    // the layer's input norm, which a parallel residual's MLP takes too

  State(const mapping::Plan& d, const mapping::Plan* p, const ModelWeights& weights, uint32_t sequences,
        std::vector<DroppedPartialSum> f)
      : decode(d),
        prefill(p),
        plan(&d),
        w(weights),
        m(weights.model()),
        act(weights.model().activation_dtype),
        kv(weights.model().kv_dtype),
        partial(d.options.partial_sum),  // the prefill plan takes the decode plan's options
        faults(std::move(f)),
        kv_of(sequences) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw FunctionalError(fmt::format("{}, step {}: {}", region->name, step->label(), what));
  }
  const BlockGeometry& geo() const { return step->env().geo; }
  std::string tile_name(uint32_t i, uint32_t j) const {
    return fmt::format("tile (wafer {}, x {}, y {})", geo().wafer, geo().x(i, j), geo().y(i, j));
  }
  int64_t dropped(uint32_t line) const {
    for (const DroppedPartialSum& f : faults)
      if (f.region == region->name && f.step == step->label() && f.line == line && (f.plan.empty() || f.plan == phase))
        return f.position;
    return -1;
  }
  void swap_token(TokenState& t);
  float rounded(float x) const { return round_to(act, x); }

  // --- norms ---------------------------------------------------------------
  std::vector<float> statistics(const std::vector<float>& x) const;
  Piece scale(const Piece& slice, const std::vector<float>& stats, Tensor tensor) const;
  Data root_norm(const Data& in, Tensor tensor) const;
  Piece add(const Piece& stream_slice, const Piece& branch) const;

  // --- GEMV ----------------------------------------------------------------
  // The weight tensor, row and expert behind output element `o` of this step's matrix.
  struct MatrixRow {
    Tensor tensor;
    uint64_t row;
    int32_t expert = -1;
  };
  MatrixRow matrix_row(uint64_t o) const;
  void append_heads(std::vector<uint32_t>& list, uint64_t first, uint64_t heads) const;
  std::vector<uint32_t> qkv_of_kv_heads(uint32_t first, uint32_t last) const;
  std::vector<uint32_t> qkv_elements(uint32_t q_first, uint32_t q_last, uint32_t first, uint32_t last) const;
  std::vector<uint32_t> qkv_of_group(const mapping::KvGroups& groups, uint32_t g) const;
  std::vector<std::vector<uint32_t>> grid_dims(uint32_t first, uint32_t last, uint32_t columns) const;
  const mapping::KvGroupAttention* next_attention() const;
  // The QKV elements each column of a group of `columns` holds for grid attention of the KV heads [first, last).
  std::vector<std::vector<uint32_t>> grid_slices(uint32_t first, uint32_t last, uint32_t columns) const;
  // The slices' re-cut between decode's groups order and the grid's (mapping/slice_exchange.h).
  Data slice_exchange(const Data& in, const mapping::SliceExchangeStep& exchange) const;
  // Grid attention's KV move: the new entry of KV head h to its tile in every copy of decode's groups.
  void move_kv_entry(const KvEntry& entry, const mapping::KvGroups& decode);
  std::vector<std::vector<uint32_t>> output_slices(uint32_t parts) const;
  const std::vector<float>& weight_block(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows,
                                         const std::vector<uint32_t>& columns);
  std::vector<float> block_product(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows, const Piece& x,
                                   bool with_bias);
  static void add_into(std::vector<float>& a, const std::vector<float>& b);
  std::vector<float> partial_sum(uint32_t i, uint32_t j, const std::vector<uint32_t>& rows, const Piece& x,
                                 bool with_bias);
  auto add_partials() const {
    return [this](std::vector<float>& a, const std::vector<float>& b) {
      for (size_t k = 0; k < a.size(); ++k) a[k] = round_to(partial, a[k] + b[k]);
    };
  }
  // ring_block_tokens > 0: the partials circulate on a MeshGEMM's ring (MeshGemmStep).
  std::vector<float> reduce_line(std::vector<std::vector<float>> partial, uint32_t ring_block_tokens,
                                 int64_t drop) const;
  Data gemv_to_column(const Data& in, bool input_on_row, uint32_t ring_block_tokens);
  Data gemv_to_row(const Data& in, uint32_t ring_block_tokens);

  // --- element-wise steps on a line ----------------------------------------------
  Piece head_transform(Piece piece, const std::string& where, const std::vector<float>* head_squares = nullptr) const;
  Data head_transforms(const Data& in, bool along_row);
  Piece activation_of(const Piece& piece) const;
  Data stream_statistics(const Data& in) const;
  Data scaled_stream(const Data& in, Tensor tensor) const;
  void add_to_stream(const Data& branch);
  // Each slice of a line through f(position, tile name).
  template <typename F>
  Data each_slice(const Data& in, bool along_row, F f) const {
    Data out{in.kind, {}};
    for (size_t p = 0; p < in.at.size(); ++p)
      out.at.push_back(f(p, along_row ? tile_name(0, uint32_t(p)) : tile_name(uint32_t(p), 0)));
    return out;
  }
  // What an element-wise step computes, by its label and place (a line step's,
  // else the root's; evaluator_elementwise.cpp); nullptr: none is registered.
  using Elementwise = Data (*)(State& state, const Data& in, bool along_row);
  static const Elementwise* elementwise(const std::string& label, bool on_line);
  // The first element-wise step of `plan` without a registered meaning, or "".
  static std::string unregistered_elementwise(const mapping::Plan& plan);

  // --- gathers and broadcasts ----------------------------------------------------
  uint64_t gathered_size() const;
  Data gather(const Data& in, bool reduce);
  Data broadcast(const Data& in, bool along_row);

  // --- attention -----------------------------------------------------------------
  void merge(Partials& into, const Partials& from) const;
  // The KV heads [first, last) attended with the query heads `queries` ([first, last) of them).
  std::vector<Partials> column_partials(const std::vector<float>& qkv, uint32_t first, uint32_t last,
                                        std::pair<uint32_t, uint32_t> queries, uint32_t start, uint32_t end,
                                        uint32_t window, KvPass pass);
  std::function<void(Partials&, const Partials&)> merger() const;
  std::vector<float> head_outputs(const Partials& partials, uint32_t first_head, uint32_t last_head, bool sinks) const;
  Data attention(const Data& in, const mapping::AttentionStep& attention, KvPass pass);

  // --- grid attention (mapping.attention: grid) --------------------------------
  Data grid_attention(const Data& in, const mapping::GridAttentionStep& attention, KvPass pass);

  // --- the chain ---------------------------------------------------------------
  Data lookup() const;
  void observe_step(const Data& data, const StepObserver& observe) const;

  // --- a chunk of tokens through a region, step by step ----------------------------
  using Tokens = std::vector<TokenState*>;
  // Runs `f` on every token of `tokens`, each swapped in as the current token.
  template <typename F>
  void each_token(const Tokens& tokens, F f) {
    for (size_t k = 0; k < tokens.size(); ++k) {
      swap_token(*tokens[k]);
      try {
        f(k, *tokens[k]);
      } catch (...) {
        swap_token(*tokens[k]);
        throw;
      }
      swap_token(*tokens[k]);
    }
  }
  std::vector<float> assembled(const Data& data) const;
  Data on_root_column(const std::vector<float>& vector) const;
  std::vector<float> combine(const std::vector<std::vector<float>>& own, int64_t drop) const;
  void dispatch(const Tokens& tokens);
  void keep_result(const Data& data);
  // One step of a block over every token of the chunk (evaluator.cpp).
  class ChunkThroughStep;
  void run_block(size_t index, const Tokens& tokens, const ChunkObserver* observe);
  Data resliced(const Data& in);
  void run_region(size_t index, const Tokens& tokens, const ChunkObserver& observe);
  void use(const mapping::Plan& p) {
    plan = &p;
    phase = p.phase == mapping::Phase::Prefill ? "prefill" : "decode";
  }
};

}  // namespace wafersim::functional
