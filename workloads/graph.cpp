#include "workloads/graph.h"

#include <map>
#include <stdexcept>

#include "workloads/op_costs.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Embedding: return "embedding";
    case OpKind::PositionEmbedding: return "position_embedding";
    case OpKind::Norm: return "norm";
    case OpKind::MatMul: return "matmul";
    case OpKind::QkNorm: return "qk_norm";
    case OpKind::Rotary: return "rotary";
    case OpKind::KvAppend: return "kv_append";
    case OpKind::AttentionScores: return "attention_scores";
    case OpKind::Softmax: return "softmax";
    case OpKind::AttentionValues: return "attention_values";
    case OpKind::ResidualAdd: return "residual_add";
    case OpKind::Activation: return "activation";
    case OpKind::TopK: return "top_k";
    case OpKind::ExpertCombine: return "expert_combine";
    case OpKind::Sample: return "sample";
  }
  return "?";
}

void GraphTotals::add(const GraphOp& op) {
  flops += op.flops;
  weight_bytes_read += op.weight_bytes_read;
  kv_bytes_read += op.kv_bytes_read;
  kv_bytes_written += op.kv_bytes_written;
  activation_bytes_in += op.activation_bytes_in;
  activation_bytes_out += op.activation_bytes_out;
}

GraphTotals graph_totals(const Graph& graph) {
  GraphTotals totals;
  for (const GraphOp& op : graph.ops) totals.add(op);
  return totals;
}

GraphTotals layer_totals(const Graph& graph, int32_t layer) {
  GraphTotals totals;
  for (const GraphOp& op : graph.ops)
    if (op.layer == layer) totals.add(op);
  return totals;
}

namespace {

// What attention does in one layer, summed over the batch; decode and prefill
// differ only in these figures.
struct AttentionWork {
  uint64_t score_pairs = 0;     // (query, key position) pairs scored
  uint64_t positions_read = 0;  // distinct cached positions read
  std::vector<uint64_t> scores_shape;
};

// Which tokens a layer's rows are: (sequence, position) for each row.
struct Row {
  uint64_t sequence;
  uint64_t position;
};

class GraphBuilder {
 public:
  GraphBuilder(const ModelSpec& model, Graph& graph, std::vector<Row> rows, uint64_t seed)
      : model_(model), graph_(graph), rows_(std::move(rows)), router_(seed, model.moe.n_experts, model.moe.top_k) {}

  // Embedding, then every layer; returns the op holding the residual stream.
  uint32_t build_layers(const std::vector<AttentionWork>& attention) {
    const uint64_t n = rows_.size();
    const uint64_t d = model_.d_model;
    GraphOp embed = make("embedding", OpKind::Embedding, -1, {n}, {n, d});
    embed.weight_bytes_read = weight_bytes(n * d);  // only the rows looked up
    embed.activation_bytes_in = n * kTokenIdBytes;
    embed.activation_bytes_out = act(n * d);
    uint32_t stream = push(std::move(embed));
    if (model_.positions == PositionKind::Learned) {
      GraphOp pos = make("position_embedding", OpKind::PositionEmbedding, -1, {n, d}, {n, d});
      set_cost(pos, position_add_cost(model_, n));
      pos.deps = {stream};
      stream = push(std::move(pos));
    }
    for (uint32_t layer = 0; layer < model_.n_layers; ++layer) stream = build_layer(layer, attention[layer], stream);
    return stream;
  }

  // Final norm, LM head and argmax over the rows `head_rows` (indices into the rows).
  void build_head(uint32_t stream, uint64_t head_rows) {
    const uint64_t d = model_.d_model;
    const uint32_t normed = norm("final_norm", -1, head_rows, stream);
    const uint64_t vocab = model_.vocab_size;
    GraphOp head = make("lm_head", OpKind::MatMul, -1, {head_rows, d}, {head_rows, vocab});
    head.tokens = head_rows;
    head.flops = head_rows * matmul_flops(d, vocab, model_.lm_head_bias);
    head.weight_bytes_read = weight_bytes(d * vocab + (model_.lm_head_bias ? vocab : 0));
    head.activation_bytes_in = act(head_rows * d);
    head.activation_bytes_out = act(head_rows * vocab);
    head.deps = {normed};
    const uint32_t logits = push(std::move(head));
    GraphOp sample = make("sample", OpKind::Sample, -1, {head_rows, vocab}, {head_rows});
    sample.flops = head_rows * vocab * ElementwiseFlops::kArgmax;
    sample.activation_bytes_in = act(head_rows * vocab);
    sample.activation_bytes_out = head_rows * kTokenIdBytes;
    sample.deps = {logits};
    push(std::move(sample));
  }

 private:
  uint64_t act(uint64_t elements) const { return dtype_bytes(model_.activation_dtype, elements); }
  uint64_t weight_bytes(uint64_t elements) const { return dtype_bytes(model_.weight_dtype, elements); }

  GraphOp make(std::string name, OpKind kind, int32_t layer, std::vector<uint64_t> in,
               std::vector<uint64_t> out) const {
    GraphOp op;
    op.name = layer >= 0 ? "layers." + std::to_string(layer) + "." + name : std::move(name);
    op.kind = kind;
    op.layer = layer;
    op.input_shape = std::move(in);
    op.output_shape = std::move(out);
    op.tokens = rows_.size();
    return op;
  }

  static void set_cost(GraphOp& op, const OpCost& cost) {
    op.flops = cost.flops;
    op.weight_bytes_read = cost.weight_bytes;
    op.activation_bytes_in = cost.activation_bytes_in;
    op.activation_bytes_out = cost.activation_bytes_out;
  }

  uint32_t push(GraphOp op) {
    graph_.ops.push_back(std::move(op));
    return uint32_t(graph_.ops.size() - 1);
  }

  uint32_t norm(const std::string& name, int32_t layer, uint64_t n, uint32_t input) {
    const uint64_t d = model_.d_model;
    GraphOp op = make(name, OpKind::Norm, layer, {n, d}, {n, d});
    op.tokens = n;
    set_cost(op, norm_cost(model_, n));
    op.deps = {input};
    return push(std::move(op));
  }

  uint32_t residual(const std::string& name, int32_t layer, uint32_t stream, uint32_t branch) {
    const uint64_t n = rows_.size(), d = model_.d_model;
    GraphOp op = make(name, OpKind::ResidualAdd, layer, {n, d}, {n, d});
    set_cost(op, residual_cost(model_, n));
    op.deps = {stream, branch};
    return push(std::move(op));
  }

  uint32_t matmul(const std::vector<MatrixSpec>& matrices, uint32_t index, int32_t layer, uint64_t n,
                  std::vector<uint32_t> deps) {
    const MatrixSpec& m = matrices[index];
    GraphOp op = make(m.name, OpKind::MatMul, layer, {n, m.d_in}, {n, m.d_out});
    op.matrix = int32_t(index);
    op.expert = m.expert;
    op.tokens = n;
    op.flops = n * matmul_flops(m.d_in, m.d_out, m.bias);
    op.weight_bytes_read = m.bytes();
    op.activation_bytes_in = act(n * m.d_in);
    op.activation_bytes_out = act(n * m.d_out);
    op.deps = std::move(deps);
    return push(std::move(op));
  }

  // Index of the first matrix named `name` in a layer's list.
  static uint32_t find(const std::vector<MatrixSpec>& matrices, const std::string& name) {
    for (uint32_t i = 0; i < matrices.size(); ++i)
      if (matrices[i].name == name) return i;
    throw std::logic_error("graph: no matrix " + name);
  }

  // Gate/up, activation and down of one feed-forward block; returns the down projection.
  uint32_t ffn(const std::vector<MatrixSpec>& matrices, const std::string& prefix, int32_t layer, uint64_t n,
               uint64_t width, std::vector<uint32_t> inputs, int32_t expert) {
    const bool gated = activation_inputs(model_.mlp) == 2;
    std::vector<uint32_t> activation_deps;
    if (gated) activation_deps.push_back(matmul(matrices, find(matrices, prefix + "gate_proj"), layer, n, inputs));
    activation_deps.push_back(matmul(matrices, find(matrices, prefix + "up_proj"), layer, n, inputs));
    GraphOp op = make(prefix + "act", OpKind::Activation, layer, {n, width}, {n, width});
    op.expert = expert;
    op.tokens = n;
    op.flops = n * width * activation_flops_per_element(model_.mlp);
    op.activation_bytes_in = act(activation_inputs(model_.mlp) * n * width);
    op.activation_bytes_out = act(n * width);
    op.deps = activation_deps;
    const uint32_t activated = push(std::move(op));
    return matmul(matrices, find(matrices, prefix + "down_proj"), layer, n, {activated});
  }

  // The queries and the cache entry attention reads, after the layer's input norm.
  struct AttentionInputs {
    uint32_t q = 0, cached = 0;
  };

  AttentionInputs build_qkv(const std::vector<MatrixSpec>& matrices, int32_t layer, uint32_t attn_in) {
    const uint64_t n = rows_.size(), hd = model_.head_dim;
    const uint64_t q_width = model_.n_heads * hd, kv_width = model_.n_kv_heads * hd;
    uint32_t q = matmul(matrices, find(matrices, "q_proj"), layer, n, {attn_in});
    uint32_t k = matmul(matrices, find(matrices, "k_proj"), layer, n, {attn_in});
    const uint32_t v = matmul(matrices, find(matrices, "v_proj"), layer, n, {attn_in});
    const uint64_t qk_elements = n * (q_width + kv_width);
    if (model_.qk_norm) {
      GraphOp op = make("qk_norm", OpKind::QkNorm, layer, {n, q_width + kv_width}, {n, q_width + kv_width});
      op.flops = qk_elements * ElementwiseFlops::kRmsNorm;
      op.weight_bytes_read = weight_bytes(2 * hd);
      op.activation_bytes_in = act(qk_elements);
      op.activation_bytes_out = act(qk_elements);
      op.deps = {q, k};
      q = k = push(std::move(op));
    }
    if (model_.positions == PositionKind::Rotary) {
      GraphOp op = make("rotary", OpKind::Rotary, layer, {n, q_width + kv_width}, {n, q_width + kv_width});
      op.flops = n * rotated_elements(model_) * ElementwiseFlops::kRotary;
      op.activation_bytes_in = act(qk_elements);
      op.activation_bytes_out = act(qk_elements);
      op.deps = q == k ? std::vector<uint32_t>{q} : std::vector<uint32_t>{q, k};
      q = k = push(std::move(op));
    }
    GraphOp append = make("kv_append", OpKind::KvAppend, layer, {n, 2 * kv_width}, {n, 2 * kv_width});
    append.kv_bytes_written = n * kv_bytes_per_position(model_);
    append.activation_bytes_in = act(2 * n * kv_width);
    append.deps = {k, v};
    return {q, push(std::move(append))};
  }

  // A per-head product of latent attention run absorbed (DeepSeek-V2, section
  // 2.1.3): each of the n_heads heads multiplies its own part of the op's
  // `in_width` inputs by its block of the matrix, so the op reads and writes
  // every head's elements, with the matrix's weights and FLOPs.
  uint32_t absorbed(const std::vector<MatrixSpec>& matrices, const std::string& name, int32_t layer, uint64_t n,
                    uint64_t in_width, uint64_t out_width, uint32_t input) {
    const uint32_t op = matmul(matrices, find(matrices, name), layer, n, {input});
    GraphOp& product = graph_.ops[op];
    product.input_shape = {n, in_width};
    product.output_shape = {n, out_width};
    product.activation_bytes_in = act(n * in_width);
    product.activation_bytes_out = act(n * out_width);
    return op;
  }

  // Multi-head latent attention, absorbed: the query and KV latents, their
  // RMSNorms, the query's up projection, rotary on the rope parts, each head's
  // non-rotary query through W_UK into the latent space (k_up_proj), and the
  // cache entry: the normed KV latent and the rope key.
  AttentionInputs build_mla(const std::vector<MatrixSpec>& matrices, int32_t layer, uint32_t attn_in) {
    const MlaSpec& mla = model_.mla;
    const uint64_t n = rows_.size(), heads = model_.n_heads, entry = model_.cached_entry_dim();
    const uint32_t q_latent = matmul(matrices, find(matrices, "q_a_proj"), layer, n, {attn_in});
    const uint32_t kv_latent = matmul(matrices, find(matrices, "kv_a_proj_with_mqa"), layer, n, {attn_in});
    const uint64_t latents = uint64_t(mla.q_lora_rank) + mla.kv_lora_rank;
    GraphOp norm = make("latent_norm", OpKind::Norm, layer, {n, latents}, {n, latents});
    norm.flops = n * latents * ElementwiseFlops::kRmsNorm;
    norm.weight_bytes_read = weight_bytes(latents);
    norm.activation_bytes_in = act(n * latents);
    norm.activation_bytes_out = act(n * latents);
    norm.deps = {q_latent, kv_latent};
    const uint32_t normed = push(std::move(norm));
    const uint32_t q = matmul(matrices, find(matrices, "q_b_proj"), layer, n, {normed});
    const uint64_t q_width = heads * (uint64_t(model_.head_dim) + mla.qk_rope_head_dim);
    GraphOp rotary = make("rotary", OpKind::Rotary, layer, {n, q_width + entry}, {n, q_width + entry});
    rotary.flops = n * rotated_elements(model_) * ElementwiseFlops::kRotary;
    rotary.activation_bytes_in = act(n * (q_width + entry));
    rotary.activation_bytes_out = rotary.activation_bytes_in;
    rotary.deps = {q, normed};
    const uint32_t turned = push(std::move(rotary));
    // The absorbed query, as attention reads it: each head's latent-space query and its rope part, passed on.
    const uint32_t q_absorbed = absorbed(matrices, "k_up_proj", layer, n, q_width, heads * entry, turned);
    GraphOp append = make("kv_append", OpKind::KvAppend, layer, {n, entry}, {n, entry});
    append.kv_bytes_written = n * kv_bytes_per_position(model_);
    append.activation_bytes_in = act(n * entry);
    append.deps = {turned};
    return {q_absorbed, push(std::move(append))};
  }

  uint32_t build_layer(uint32_t layer_index, const AttentionWork& work, uint32_t stream) {
    const int32_t layer = int32_t(layer_index);
    const std::vector<MatrixSpec> matrices = layer_matrices(model_, layer_index);
    const uint64_t n = rows_.size();
    const uint64_t q_width = uint64_t(model_.n_heads) * model_.attention_key_dim();
    const uint64_t out_width = uint64_t(model_.n_heads) * model_.attention_value_dim();

    const uint32_t attn_in = norm("attn_norm", layer, n, stream);
    const auto [q, cached] =
        model_.is_mla() ? build_mla(matrices, layer, attn_in) : build_qkv(matrices, layer, attn_in);

    // Scores read every cached element; the values re-read the keys' (MLA: the latent) or their own half.
    const uint64_t position_bytes = kv_bytes_per_position(model_);
    const uint64_t key_bytes = model_.is_mla() ? position_bytes : position_bytes / 2;
    const uint64_t value_bytes = position_bytes - key_bytes;
    const uint64_t heads = model_.n_heads;
    GraphOp scores = make("attention_scores", OpKind::AttentionScores, layer, {n, q_width}, work.scores_shape);
    scores.flops = heads * score_flops(model_) * work.score_pairs;
    scores.kv_bytes_read = work.positions_read * key_bytes;
    scores.activation_bytes_in = act(n * q_width);
    scores.activation_bytes_out = act(heads * work.score_pairs);
    scores.deps = {q, cached};
    const uint32_t logits = push(std::move(scores));

    const uint64_t sink_logits = model_.attention_sinks ? heads * n : 0;
    GraphOp softmax = make("softmax", OpKind::Softmax, layer, work.scores_shape, work.scores_shape);
    softmax.flops = (heads * work.score_pairs + sink_logits) * ElementwiseFlops::kSoftmax;
    softmax.weight_bytes_read = model_.attention_sinks ? weight_bytes(heads) : 0;
    softmax.activation_bytes_in = act(heads * work.score_pairs);
    softmax.activation_bytes_out = act(heads * work.score_pairs);
    softmax.deps = {logits};
    const uint32_t probabilities = push(std::move(softmax));

    GraphOp values = make("attention_values", OpKind::AttentionValues, layer, work.scores_shape, {n, out_width});
    values.flops = heads * value_flops(model_) * work.score_pairs;
    values.kv_bytes_read = work.positions_read * value_bytes;
    values.activation_bytes_in = act(heads * work.score_pairs);
    values.activation_bytes_out = act(n * out_width);
    values.deps = {probabilities, cached};
    uint32_t attended = push(std::move(values));
    // Each head's latent output through its block of W_UV.
    if (model_.is_mla())
      attended = absorbed(matrices, "v_up_proj", layer, n, out_width, heads * model_.mla.v_head_dim, attended);

    const uint32_t out = matmul(matrices, find(matrices, "o_proj"), layer, n, {attended});
    stream = residual("attn_residual", layer, stream, out);

    // A parallel residual's MLP reads the attention's input norm: the layer has no other.
    const uint32_t mlp_in = model_.parallel_residual ? attn_in : norm("mlp_norm", layer, n, stream);
    uint32_t mlp_out = 0;
    if (!model_.is_moe_layer(layer_index))
      mlp_out = ffn(matrices, "", layer, n, model_.ffn_dim, {mlp_in}, -1);
    else
      mlp_out = moe(matrices, layer_index, mlp_in);
    return residual("mlp_residual", layer, stream, mlp_out);
  }

  uint32_t moe(const std::vector<MatrixSpec>& matrices, uint32_t layer_index, uint32_t mlp_in) {
    const int32_t layer = int32_t(layer_index);
    const MoeSpec& spec = model_.moe;
    const uint64_t n = rows_.size(), d = model_.d_model, k = spec.top_k;

    const uint32_t router_logits = matmul(matrices, find(matrices, "router"), layer, n, {mlp_in});
    GraphOp topk = make("top_k", OpKind::TopK, layer, {n, spec.n_experts}, {n, k});
    topk.flops = n * top_k_flops(model_);
    topk.activation_bytes_in = act(n * spec.n_experts);
    topk.activation_bytes_out = act(n * k) + n * k * kTokenIdBytes;  // weights and expert indices
    topk.deps = {router_logits};
    const uint32_t choice = push(std::move(topk));

    std::vector<uint32_t> combine_deps = {choice};
    for (uint32_t s = 0; s < spec.n_shared_experts; ++s)
      combine_deps.push_back(
          ffn(matrices, "shared_experts." + std::to_string(s) + ".", layer, n, spec.expert_ffn_dim, {mlp_in}, -1));

    // Tokens per expert, from the seeded router; experts no token chose do not run.
    std::map<uint32_t, uint64_t> tokens_per_expert;
    std::vector<uint32_t> chosen(k);
    for (const Row& row : rows_) {
      router_.route(row.sequence, row.position, layer_index, chosen.data());
      for (uint32_t expert : chosen) ++tokens_per_expert[expert];
    }
    for (const auto& [expert, tokens] : tokens_per_expert)
      combine_deps.push_back(ffn(matrices, "experts." + std::to_string(expert) + ".", layer, tokens,
                                 spec.expert_ffn_dim, {mlp_in, choice}, int32_t(expert)));

    const uint64_t shared = spec.n_shared_experts;
    GraphOp combine = make("expert_combine", OpKind::ExpertCombine, layer, {n, k + shared, d}, {n, d});
    combine.flops = n * d * (k * (ElementwiseFlops::kScale + ElementwiseFlops::kAdd) + shared * ElementwiseFlops::kAdd);
    combine.activation_bytes_in = act(n * (k + shared) * d) + act(n * k);
    combine.activation_bytes_out = act(n * d);
    combine.deps = combine_deps;
    return push(std::move(combine));
  }

  const ModelSpec& model_;
  Graph& graph_;
  std::vector<Row> rows_;
  ExpertRouter router_;
};

}  // namespace

Graph build_decode_graph(const ModelSpec& model, const DecodeStep& step) {
  if (step.batch == 0 || step.context == 0) throw std::invalid_argument("decode step needs batch and context >= 1");
  Graph graph;
  graph.batch = step.batch;
  graph.context = step.context;
  std::vector<Row> rows;
  for (uint64_t s = 0; s < step.batch; ++s) rows.push_back({s, step.context - 1});

  std::vector<AttentionWork> attention(model.n_layers);
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    const uint64_t positions = model.attended_positions(layer, step.context);
    attention[layer].score_pairs = step.batch * positions;
    attention[layer].positions_read = step.batch * positions;
    attention[layer].scores_shape = {step.batch, model.n_heads, positions};
  }
  GraphBuilder builder(model, graph, std::move(rows), step.seed);
  builder.build_head(builder.build_layers(attention), step.batch);
  return graph;
}

Graph build_prefill_graph(const ModelSpec& model, const PrefillStep& step) {
  if (step.batch == 0 || step.prompt_tokens == 0)
    throw std::invalid_argument("prefill needs batch and prompt_tokens >= 1");
  Graph graph;
  graph.prefill = true;
  graph.batch = step.batch;
  graph.prompt_tokens = step.prompt_tokens;
  const uint64_t p = step.prompt_tokens;
  std::vector<Row> rows;
  for (uint64_t s = 0; s < step.batch; ++s)
    for (uint64_t position = 0; position < p; ++position) rows.push_back({s, position});

  std::vector<AttentionWork> attention(model.n_layers);
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    // Token i attends to min(i + 1, window) positions.
    uint64_t pairs = 0;
    for (uint64_t position = 0; position < p; ++position) pairs += model.attended_positions(layer, position + 1);
    attention[layer].score_pairs = step.batch * pairs;
    attention[layer].positions_read = step.batch * p;
    attention[layer].scores_shape = {step.batch, model.n_heads, p, model.attended_positions(layer, p)};
  }
  GraphBuilder builder(model, graph, std::move(rows), step.seed);
  builder.build_head(builder.build_layers(attention), step.batch);
  return graph;
}

}  // namespace wafersim::workloads
