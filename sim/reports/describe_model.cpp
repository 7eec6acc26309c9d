// `wafersim describe model NAME`: a model's parameters, the ops of one decode
// step and what they cost, as a table and as JSON; without NAME, the zoo.
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "models/config/text.h"
#include "sim/reports/command_error.h"
#include "sim/reports/output.h"
#include "sim/reports/reports.h"
#include "workloads/graph.h"
#include "workloads/lowering.h"
#include "workloads/model_file.h"

namespace wafersim::reports {

namespace {

using workloads::Graph;
using workloads::GraphOp;
using workloads::ModelSpec;

std::string with_commas(uint64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "8.03 B", "16.06 G": three significant decimals for a quick read beside the exact figure.
std::string scaled(double value, const char* unit_suffix) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int p = 0;
  while (value >= 1000 && p < 5) {
    value /= 1000;
    ++p;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f%s%s", value, prefixes[p], unit_suffix);
  return buffer;
}

// Parameter counts as model cards quote them: "8.03 B"; smaller models "4.07 M".
std::string params_text(uint64_t count) {
  if (count < 1000000000) return scaled(double(count), "");
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f B", double(count) / 1e9);
  return buffer;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::vector<std::string> dims;
  for (uint64_t dim : shape) dims.push_back(std::to_string(dim));
  return "[" + config::join(dims) + "]";
}

std::string dash_if_zero(uint64_t value) { return value ? with_commas(value) : "-"; }

// "0-31", "0, 2, ..., 34", or the plain list.
std::string layer_list(const std::vector<uint32_t>& layers) {
  if (layers.size() == 1) return std::to_string(layers[0]);
  const uint32_t step = layers[1] - layers[0];
  bool arithmetic = true;
  for (size_t i = 1; i < layers.size(); ++i) arithmetic &= layers[i] - layers[i - 1] == step;
  if (arithmetic && step == 1) return std::to_string(layers.front()) + "-" + std::to_string(layers.back());
  if (arithmetic && layers.size() > 3)
    return std::to_string(layers[0]) + ", " + std::to_string(layers[1]) + ", ..., " + std::to_string(layers.back());
  std::vector<std::string> items;
  for (uint32_t layer : layers) items.push_back(std::to_string(layer));
  return config::join(items);
}

// An op's name without its layer, routed experts folded into one name.
std::string generic_name(const GraphOp& op) {
  std::string name = op.name;
  const std::string layer_prefix = "layers." + std::to_string(op.layer) + ".";
  if (op.layer >= 0 && name.rfind(layer_prefix, 0) == 0) name = name.substr(layer_prefix.size());
  const std::string expert_prefix = "experts." + std::to_string(op.expert) + ".";
  if (op.expert >= 0 && name.rfind(expert_prefix, 0) == 0) name = "experts.*." + name.substr(expert_prefix.size());
  return name;
}

// The compiler's steps that do an op's work (workloads/lowering.h), a layer's
// as mapping.dataflow's default (distributed) lays it out.
std::vector<std::string> steps_of(const GraphOp& op, const ModelSpec& model) {
  using workloads::LayerLowering;
  std::string name = op.name;
  const std::string layer_prefix = "layers." + std::to_string(op.layer) + ".";
  if (op.layer >= 0 && name.rfind(layer_prefix, 0) == 0) name = name.substr(layer_prefix.size());
  LayerLowering kind = LayerLowering::DistributedLayer;
  if (op.layer < 0) {
    const bool input = op.kind == workloads::OpKind::Embedding || op.kind == workloads::OpKind::PositionEmbedding;
    kind = input ? LayerLowering::Embedding : LayerLowering::Head;
  } else if (model.is_moe_layer(uint32_t(op.layer))) {
    kind = LayerLowering::DistributedMoeLayer;
    for (const char* experts : {"experts.", "shared_experts."})
      if (name.rfind(experts, 0) == 0) {
        kind = LayerLowering::Expert;
        name = name.substr(name.find('.', std::string(experts).size()) + 1);  // after "experts.N."
      }
  }
  return workloads::steps_of_op(kind, name, model.parallel_residual);
}

// A table row; routed-expert ops of one kind are summed into a single row.
struct Row {
  std::string name;
  uint32_t experts = 0;
  GraphOp sum;
  std::vector<std::string> steps;
};

std::vector<Row> rows_of(const Graph& graph, const ModelSpec& model, int32_t layer) {
  std::vector<Row> rows;
  std::map<std::string, size_t> expert_rows;
  for (const GraphOp& op : graph.ops) {
    if (op.layer != layer) continue;
    const std::string name = generic_name(op);
    if (op.expert < 0) {
      rows.push_back({name, 0, op, steps_of(op, model)});
      continue;
    }
    auto found = expert_rows.find(name);
    if (found == expert_rows.end()) {
      expert_rows[name] = rows.size();
      rows.push_back({name, 1, op, steps_of(op, model)});
      continue;
    }
    Row& row = rows[found->second];
    row.experts += 1;
    row.sum.tokens += op.tokens;
    row.sum.input_shape[0] += op.input_shape[0];
    row.sum.output_shape[0] += op.output_shape[0];
    row.sum.flops += op.flops;
    row.sum.weight_bytes_read += op.weight_bytes_read;
    row.sum.activation_bytes_in += op.activation_bytes_in;
    row.sum.activation_bytes_out += op.activation_bytes_out;
  }
  return rows;
}

// Layers that share the ops and shapes (routed experts aside) print once.
std::vector<std::vector<uint32_t>> layer_groups(const Graph& graph, const ModelSpec& model) {
  std::map<std::string, size_t> group_of;
  std::vector<std::vector<uint32_t>> groups;
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    std::string signature;
    for (const Row& row : rows_of(graph, model, int32_t(layer)))
      if (row.experts == 0)
        signature += row.name + shape_text(row.sum.input_shape) + shape_text(row.sum.output_shape) + ";";
    auto [it, inserted] = group_of.emplace(signature, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(layer);
  }
  return groups;
}

std::string ops_table(const std::vector<Row>& rows) {
  Table table({{"op", "", false},
               {"in", "", false},
               {"out", "", false},
               {"FLOPs", "", true},
               {"weights", "bytes", true},
               {"KV read", "bytes", true},
               {"KV written", "bytes", true},
               {"activations in+out", "bytes", true},
               {"compiler steps", "", false}});
  for (const Row& row : rows) {
    const GraphOp& op = row.sum;
    const std::string name = row.experts ? row.name + " (" + std::to_string(row.experts) + " experts)" : row.name;
    table.add_row({name, shape_text(op.input_shape), shape_text(op.output_shape), with_commas(op.flops),
                   dash_if_zero(op.weight_bytes_read), dash_if_zero(op.kv_bytes_read),
                   dash_if_zero(op.kv_bytes_written), with_commas(op.activation_bytes_in + op.activation_bytes_out),
                   row.steps.empty() ? "-" : config::join(row.steps)});
  }
  return table.str();
}

std::string layer_traits(const ModelSpec& model, uint32_t layer) {
  std::string traits = model.is_moe_layer(layer) ? "MoE" : "dense";
  if (model.has_sliding_window(layer)) traits += ", sliding window of " + std::to_string(model.sliding_window);
  return traits;
}

void print_summary(const workloads::LoadedModel& loaded, const Graph& graph, std::ostream& out) {
  const ModelSpec& m = loaded.model;
  const workloads::ParamCounts counts = workloads::count_params(m);
  const workloads::GraphTotals totals = workloads::graph_totals(graph);
  out << "model " << m.name << " (" << loaded.source << ")\n"
      << "  " << m.n_layers << " layers, d_model " << m.d_model << ", " << m.n_heads << " query heads and "
      << m.n_kv_heads << " key/value heads of " << m.head_dim << ", ";
  if (m.is_mla())
    out << "latent attention (query latent " << m.mla.q_lora_rank << ", cached KV latent " << m.mla.kv_lora_rank
        << " and rope key " << m.mla.qk_rope_head_dim << ", value heads of " << m.mla.v_head_dim << "), ";
  if (m.moe.n_experts)
    out << m.moe.n_experts << " experts (top " << m.moe.top_k << ", " << m.moe.n_shared_experts << " shared) of width "
        << m.moe.expert_ffn_dim << " on " << m.moe.layers.size() << " layers, ";
  if (m.ffn_dim) out << "dense MLP width " << m.ffn_dim << ", ";
  out << "vocabulary " << m.vocab_size << ", up to " << m.max_positions << " positions\n"
      << "  dtypes: weights " << to_string(m.weight_dtype)
      << (m.moe.n_experts ? std::string(", experts ") + to_string(m.moe_weight_dtype) : std::string()) << ", KV cache "
      << to_string(m.kv_dtype) << ", activations " << to_string(m.activation_dtype) << "\n\n";

  Table params({{"parameters", "", false}, {"exact", "", true}, {"", "", false}});
  params.add_row({"total", with_commas(counts.total), params_text(counts.total)});
  params.add_row({"active per token", with_commas(counts.active), params_text(counts.active)});
  params.add_row({"weights", with_commas(counts.weight_bytes) + " bytes", scaled(double(counts.weight_bytes), "B")});
  out << params.str() << "  (" << workloads::active_params_convention() << ")\n\n";

  out << "decode step: batch " << graph.batch << ", context " << graph.context
      << " positions (the new token included)\n\n";
  std::vector<Row> embedding, head;
  for (const Row& row : rows_of(graph, m, -1)) {
    const bool input =
        row.sum.kind == workloads::OpKind::Embedding || row.sum.kind == workloads::OpKind::PositionEmbedding;
    (input ? embedding : head).push_back(row);
  }
  out << "embedding\n" << ops_table(embedding) << "\n";
  for (const std::vector<uint32_t>& group : layer_groups(graph, m)) {
    out << "layer " << group[0] << " (" << layer_traits(m, group[0]) << "); "
        << (group.size() == 1 ? "only this layer"
                              : "the same ops in " + std::to_string(group.size()) + " layers: " + layer_list(group))
        << (m.is_moe_layer(group[0]) ? "; routed experts differ by layer" : "") << "\n"
        << ops_table(rows_of(graph, m, int32_t(group[0]))) << "\n";
  }
  out << "head\n"
      << ops_table(head)
      << "  (compiler steps: the steps of a region's chain that do the op's work, workloads/lowering.cpp; a dense\n"
         "  layer's as mapping.dataflow: distributed lays it out)\n\n";

  const uint64_t per_position = workloads::kv_bytes_per_position(m);
  const uint64_t batch = graph.batch;
  Table summary({{"per decode step", "", false}, {"value", "", true}, {"", "", false}});
  summary.add_row({"FLOPs per token", with_commas(totals.flops / batch), scaled(double(totals.flops / batch), "FLOP")});
  summary.add_row({"FLOPs, whole step", with_commas(totals.flops), scaled(double(totals.flops), "FLOP")});
  summary.add_row({"weights read", with_commas(totals.weight_bytes_read) + " bytes",
                   scaled(double(totals.weight_bytes_read), "B")});
  summary.add_row(
      {"KV cache read", with_commas(totals.kv_bytes_read) + " bytes", scaled(double(totals.kv_bytes_read), "B")});
  summary.add_row({"KV cache written", with_commas(totals.kv_bytes_written) + " bytes",
                   scaled(double(totals.kv_bytes_written), "B")});
  summary.add_row({"KV cache per token per layer", with_commas(per_position) + " bytes", ""});
  summary.add_row({"KV cache per token, all layers", with_commas(per_position * m.n_layers) + " bytes", ""});
  const uint64_t at_context = workloads::kv_bytes_at_context(m, graph.context);
  summary.add_row({"KV cache per sequence at context " + std::to_string(graph.context),
                   with_commas(at_context) + " bytes", scaled(double(at_context), "B")});
  out << summary.str();
}

nlohmann::json op_json(const GraphOp& op, const ModelSpec& model) {
  return {{"name", op.name},
          {"kind", workloads::to_string(op.kind)},
          {"layer", op.layer},
          {"expert", op.expert},
          {"input_shape", op.input_shape},
          {"output_shape", op.output_shape},
          {"tokens", op.tokens},
          {"flops", op.flops},
          {"weight_bytes_read", op.weight_bytes_read},
          {"kv_bytes_read", op.kv_bytes_read},
          {"kv_bytes_written", op.kv_bytes_written},
          {"activation_bytes_in", op.activation_bytes_in},
          {"activation_bytes_out", op.activation_bytes_out},
          {"deps", op.deps},
          {"steps", steps_of(op, model)}};
}

nlohmann::json describe_json(const workloads::LoadedModel& loaded, const Graph& graph) {
  const ModelSpec& m = loaded.model;
  const workloads::ParamCounts counts = workloads::count_params(m);
  const workloads::GraphTotals totals = workloads::graph_totals(graph);
  nlohmann::json ops = nlohmann::json::array();
  for (const GraphOp& op : graph.ops) ops.push_back(op_json(op, m));
  return {{"model", m.name},
          {"source", loaded.source},
          {"context", graph.context},
          {"batch", graph.batch},
          {"params_total", counts.total},
          {"params_active", counts.active},
          {"params_active_convention", workloads::active_params_convention()},
          {"weight_bytes", counts.weight_bytes},
          {"flops_per_token", totals.flops / graph.batch},
          {"kv_bytes_per_token", workloads::kv_bytes_per_position(m) * m.n_layers},
          {"kv_bytes_per_token_per_layer", workloads::kv_bytes_per_position(m)},
          {"kv_bytes_at_context", workloads::kv_bytes_at_context(m, graph.context)},
          {"decode_step",
           {{"flops", totals.flops},
            {"weight_bytes_read", totals.weight_bytes_read},
            {"kv_bytes_read", totals.kv_bytes_read},
            {"kv_bytes_written", totals.kv_bytes_written},
            {"activation_bytes_in", totals.activation_bytes_in},
            {"activation_bytes_out", totals.activation_bytes_out}}},
          {"ops", ops}};
}

}  // namespace

// `describe model` without a name: the zoo, one line per model.
Report model_list_report(const std::vector<std::string>& overrides) {
  Table table({{"model", "", false},
               {"layers", "", true},
               {"d_model", "", true},
               {"experts", "", true},
               {"parameters", "", true},
               {"active per token", "", true},
               {"file", "", false}});
  nlohmann::json models = nlohmann::json::array();
  for (const std::string& name : workloads::zoo_model_names()) {
    const workloads::LoadedModel loaded = workloads::load_model(name, overrides);
    const ModelSpec& m = loaded.model;
    const workloads::ParamCounts counts = workloads::count_params(m);
    table.add_row({name, std::to_string(m.n_layers), std::to_string(m.d_model),
                   m.moe.n_experts ? std::to_string(m.moe.n_experts) : "-", params_text(counts.total),
                   params_text(counts.active), loaded.source});
    models.push_back({{"model", name},
                      {"source", loaded.source},
                      {"layers", m.n_layers},
                      {"d_model", m.d_model},
                      {"experts", m.moe.n_experts},
                      {"params_total", counts.total},
                      {"params_active", counts.active}});
  }
  return {{{"models", models}}, table.str() + "(wafersim describe model NAME shows one model's ops and costs)\n"};
}

Report describe_model_report(const std::string& name, uint64_t context_given, uint32_t batch,
                             const std::vector<std::string>& overrides) {
  const workloads::LoadedModel loaded = workloads::load_model(name, overrides);
  const ModelSpec& model = loaded.model;
  const uint64_t context = context_given ? context_given : std::min<uint64_t>(4096, model.max_positions);
  if (context > model.max_positions)
    throw CommandError(kExitBadInput, "--context " + std::to_string(context) + " exceeds " + model.name +
                                          "'s max_positions (" + std::to_string(model.max_positions) + ")");
  const Graph graph = workloads::build_decode_graph(model, {batch, context, 1});
  std::ostringstream table;
  print_summary(loaded, graph, table);
  return {describe_json(loaded, graph), table.str()};
}

}  // namespace wafersim::reports
