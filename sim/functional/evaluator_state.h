#pragma once
// The evaluator's state and the steps it evaluates, shared by its files
// (evaluator.cpp: the chain of steps, norms, GEMVs, gathers and the chunk
// driver; evaluator_attention.cpp: both attention layouts). Private to them.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "sim/functional/evaluator.h"
#include "sim/functional/tile_data.h"

namespace wafersim::functional {

using mapping::BlockGeometry;
using mapping::Region;
using mapping::Step;
using mapping::StepDataflow;
using mapping::StepKind;
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
  Data stream, qkv_slices;
  Data data;  // what the last step left
};

// An attention step over a chunk: every token's key and value are stored
// first, then every token attends (causally) over what the tiles hold.
enum class KvPass { Store, Attend };

struct Evaluator::State {
  const mapping::Plan& decode;
  const mapping::Plan* prefill;
  const mapping::Plan* plan = nullptr;  // the one being evaluated
  const char* phase = "decode";
  const ModelWeights& w;
  const ModelSpec& m;
  Dtype act, kv, partial;
  std::vector<DroppedPartialSum> faults;
  // Weight blocks by (region, block, step, i, j): the prefill plan's regions
  // are the decode plan's (the same tiles keep the same blocks), so both
  // plans read one set and a tile whose block differs between them fails.
  std::map<std::tuple<size_t, size_t, size_t, uint32_t, uint32_t>, std::vector<float>> blocks;
  // KV entries per sequence, per (region, i, j)
  std::vector<std::map<std::tuple<size_t, uint32_t, uint32_t>, std::vector<KvEntry>>> kv_of;

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
  Tensor norm_tensor(const char* label) const;
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
  std::pair<uint32_t, uint32_t> kv_heads_of(uint32_t groups, uint32_t g) const;
  std::vector<std::vector<uint32_t>> grid_dims(uint32_t first, uint32_t last, uint32_t columns) const;
  std::optional<StepDataflow> next_attention() const;
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
  std::vector<float> reduce_line(std::vector<std::vector<float>> partial, const StepDataflow& df, int64_t drop) const;
  Data gemv_to_column(const Data& in, const StepDataflow& df);
  Data gemv_to_row(const Data& in, const StepDataflow& df);

  // --- element-wise steps on a line ----------------------------------------------
  Piece head_transform(Piece piece, const std::string& where, const std::vector<float>* head_squares = nullptr) const;
  Piece activation_of(const Piece& piece) const;
  Data line_compute(const Data& in, const StepDataflow& df);

  // --- gathers and broadcasts ----------------------------------------------------
  uint64_t gathered_size() const;
  Data gather(const Data& in, const StepDataflow& df);
  Data broadcast(const Data& in, const StepDataflow& df);

  // --- attention -----------------------------------------------------------------
  void merge(Partials& into, const Partials& from) const;
  std::vector<Partials> column_partials(const std::vector<float>& qkv, uint32_t first, uint32_t last, uint32_t start,
                                        uint32_t end, const StepDataflow& df, KvPass pass);
  std::function<void(Partials&, const Partials&)> merger() const;
  std::vector<float> head_outputs(const Partials& partials, uint32_t first_head, uint32_t last_head, bool sinks) const;
  Data attention(const Data& in, const StepDataflow& df, KvPass pass);

  // --- grid attention (mapping.attention: grid) --------------------------------
  Data grid_attention(const Data& in, const StepDataflow& df, KvPass pass);

  // --- the chain ---------------------------------------------------------------
  Data root_compute(const Data& in);
  Data apply(const Data& in);
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
  std::vector<float> combine(const std::vector<std::vector<float>>& own, int64_t drop) const;
  void dispatch(const Tokens& tokens);
  void keep_result(const Data& data);
  void run_block(size_t index, const Tokens& tokens, const ChunkObserver* observe);
  Data resliced(const Data& in);
  void run_region(size_t index, const Tokens& tokens, const ChunkObserver& observe);
  void use(const mapping::Plan& p) {
    plan = &p;
    phase = p.phase == mapping::Phase::Prefill ? "prefill" : "decode";
  }
};

}  // namespace wafersim::functional
