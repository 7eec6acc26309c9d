#pragma once
// The operations of one decode step, or of a prefill, in execution order: shapes,
// FLOPs, bytes and data dependencies. The compiler maps these; `describe model`
// prints them. Knows no hardware.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/model_spec.h"
#include "workloads/op_costs.h"

namespace wafersim::workloads {

enum class OpKind : uint8_t {
  Embedding,          // table lookup of the input tokens
  PositionEmbedding,  // learned position table lookup, added to the input
  Norm,               // RMSNorm or LayerNorm over d_model
  MatMul,             // activations x weight matrix (+ bias): projections, MLP, experts, router, LM head
  QkNorm,             // per-head RMSNorm of queries and keys
  Rotary,             // rotary position embedding of queries and keys
  KvAppend,           // the new keys and values written to the KV cache
  AttentionScores,    // q . k over the attended positions
  Softmax,            // over the attended positions (and the sink logit)
  AttentionValues,    // softmax-weighted sum of the values
  ResidualAdd,
  Activation,     // SiLU gate x up (SwiGLU), GELU gate x up (GeGLU), or GELU (plain MLP)
  TopK,           // the router picks each token's experts and their weights
  ExpertCombine,  // weighted sum of each token's expert outputs (+ shared experts)
  Sample,         // argmax over the vocabulary
};
const char* to_string(OpKind kind);

// The FLOPs and bytes of every op come from workloads/op_costs.h, the table the
// compiler reads too.

struct GraphOp {
  std::string name;  // "layers.3.q_proj", "layers.3.experts.17.down_proj", "lm_head"
  OpKind kind = OpKind::MatMul;
  int32_t layer = -1;                 // transformer layer; -1 for embedding, final norm, LM head, sampling
  int32_t matrix = -1;                // MatMul: index into layer_matrices(model, layer); -1 otherwise
  int32_t expert = -1;                // routed expert of an expert MatMul or Activation
  std::vector<uint64_t> input_shape;  // main input, e.g. {tokens, d_model}
  std::vector<uint64_t> output_shape;
  uint64_t tokens = 0;  // rows this op processes (routed tokens for an expert)
  uint64_t flops = 0;
  uint64_t weight_bytes_read = 0;  // weights, biases and norm vectors read
  uint64_t kv_bytes_read = 0;      // distinct KV-cache bytes read
  uint64_t kv_bytes_written = 0;
  uint64_t activation_bytes_in = 0;   // activations read (all inputs), in activation_dtype
  uint64_t activation_bytes_out = 0;  // activations written
  std::vector<uint32_t> deps;         // indices of earlier ops whose outputs this op reads
};

struct Graph {
  bool prefill = false;
  uint32_t batch = 0;          // sequences
  uint64_t context = 0;        // decode: positions attended, the new token included
  uint64_t prompt_tokens = 0;  // prefill: tokens per sequence
  std::vector<GraphOp> ops;
};

// One decode step: every sequence of the batch has `context - 1` cached positions
// and adds its token at position `context - 1`, then attends to `context`
// positions (fewer in a windowed layer). Experts come from ExpertRouter(seed),
// sequences numbered 0..batch-1, token = position.
struct DecodeStep {
  uint32_t batch = 1;
  uint64_t context = 1;
  uint64_t seed = 1;
};
Graph build_decode_graph(const ModelSpec& model, const DecodeStep& step);

// A prefill of `prompt_tokens` tokens per sequence, from an empty cache: GEMMs
// over batch * prompt_tokens rows, causal attention (token i attends to i + 1
// positions, or the window). Final norm, LM head and sampling run on the last
// token of each sequence only, which yields the first generated token.
struct PrefillStep {
  uint32_t batch = 1;
  uint64_t prompt_tokens = 1;
  uint64_t seed = 1;
};
Graph build_prefill_graph(const ModelSpec& model, const PrefillStep& step);

struct GraphTotals {
  uint64_t flops = 0;
  uint64_t weight_bytes_read = 0;
  uint64_t kv_bytes_read = 0;
  uint64_t kv_bytes_written = 0;
  uint64_t activation_bytes_in = 0;
  uint64_t activation_bytes_out = 0;
  void add(const GraphOp& op);
};
GraphTotals graph_totals(const Graph& graph);
// Totals of the ops of one transformer layer (layer = -1: the ops outside the layers).
GraphTotals layer_totals(const Graph& graph, int32_t layer);

}  // namespace wafersim::workloads
