// The element-wise steps (mapping's RootComputeStep on the block root,
// LineComputeStep on the root column or row) on real numbers: one registered
// row per step label, its name beside what it computes, so the two cannot
// part. A plan with an element-wise step no row names is refused before it is
// evaluated (Evaluator's constructor).
#include <cmath>
#include <map>

#include "sim/functional/evaluator_state.h"
#include "sim/functional/reference.h"

namespace wafersim::functional {

Data Evaluator::State::stream_statistics(const Data& in) const {
  Data out{in.kind, {}};
  for (const Piece& slice : stream.at) out.at.push_back(whole(statistics(slice.value)));
  return out;
}

Data Evaluator::State::scaled_stream(const Data& in, Tensor tensor) const {
  Data out{in.kind, {}};
  for (size_t i = 0; i < stream.at.size(); ++i) out.at.push_back(scale(stream.at[i], in.at[i].value, tensor));
  return out;
}

void Evaluator::State::add_to_stream(const Data& branch) {
  for (size_t i = 0; i < branch.at.size(); ++i) stream.at[i] = add(stream.at[i], branch.at[i]);
}

const Evaluator::State::Elementwise* Evaluator::State::elementwise(const std::string& label, bool on_line) {
  // A root step's meaning reads the root's one piece and a line step's every slice:
  // each is looked up only among the meanings of its own place.
  static const std::map<std::string, Elementwise> root_ops = {
      {"input_norm",
       [](State& s, const Data& in, bool) {
         s.stream = in;
         Data out = s.root_norm(in, Tensor::AttnNorm);
         if (s.m.parallel_residual) s.attn_input = out;
         return out;
       }},
      // A parallel residual: the attention branch joins the stream, and the
      // MLP (or the router) takes the input norm the root kept.
      {"attn_residual",
       [](State& s, const Data& in, bool) {
         s.stream.at[0] = s.add(s.stream.at[0], in.at[0]);
         s.normed = s.attn_input.at[0].value;
         return s.attn_input;
       }},
      {"residual_norm",
       [](State& s, const Data& in, bool) {
         s.stream.at[0] = s.add(s.stream.at[0], in.at[0]);
         Data out = s.root_norm(s.stream, Tensor::MlpNorm);
         s.normed = out.at[0].value;
         return out;
       }},
      // The router's choice; the vector the experts take stays at the root.
      {"top_k",
       [](State& s, const Data& in, bool) {
         s.routing.clear();
         const std::vector<double> logits(in.at[0].value.begin(), in.at[0].value.end());
         for (const auto& [expert, weight] : pick_experts(logits, s.m.moe.top_k)) {
           s.routing[expert] = float(weight);
           s.result.routed[s.region->layer].push_back(expert);
         }
         return at_root(s.normed);
       }},
      {"expert_scale",
       [](State& s, const Data& in, bool) {
         Data out = in;
         const float weight = s.routing.at(uint32_t(s.block_index - 1));
         for (float& v : out.at[0].value) v = s.rounded(v * weight);
         return out;
       }},
      {"residual",
       [](State& s, const Data& in, bool) {
         return Data{FrontKind::Root, {s.add(s.stream.at[0], in.at[0])}};
       }},
      {"final_norm", [](State& s, const Data& in, bool) { return s.root_norm(in, Tensor::FinalNorm); }},
      {"position_add",
       [](State& s, const Data& in, bool) {
         Data out = in;
         for (uint32_t c = 0; c < s.m.d_model; ++c)
           out.at[0].value[c] = s.rounded(in.at[0].value[c] + s.w.matrix(Tensor::Positions, -1, s.position, c));
         return out;
       }},
      {"sample", [](State&, const Data& in, bool) { return in; }},  // the argmax candidate the tree chose
  };
  // On the root column's (or row's) slices.
  static const std::map<std::string, Elementwise> line_ops = {
      {"input_norm_stats", [](State& s, const Data& in, bool) { return s.stream_statistics(in); }},
      {"residual_norm_stats",
       [](State& s, const Data& in, bool) {
         s.add_to_stream(in);  // the attention branch joins the stream first
         return s.stream_statistics(in);
       }},
      {"input_norm_scale",
       [](State& s, const Data& in, bool) {
         Data out = s.scaled_stream(in, Tensor::AttnNorm);
         if (s.m.parallel_residual) s.attn_input = out;
         return out;
       }},
      // A parallel residual on slices: the attention branch joins the
      // stream's slices, and the MLP takes the input norm's slices the tiles kept.
      {"attn_residual_slices",
       [](State& s, const Data& in, bool) {
         s.add_to_stream(in);
         return s.attn_input;
       }},
      {"mlp_norm_scale", [](State& s, const Data& in, bool) { return s.scaled_stream(in, Tensor::MlpNorm); }},
      {"residual_slices",
       [](State& s, const Data& in, bool) {
         s.add_to_stream(in);
         return s.stream;
       }},
      // Each tile's sums of squares per q and k head, in fp32.
      {"qk_norm_stats",
       [](State& s, const Data& in, bool) {
         s.qkv_slices = in;
         const uint64_t hd = s.m.head_dim, nk = (uint64_t(s.m.n_heads) + s.m.n_kv_heads) * hd;
         Data out{in.kind, {}};
         for (const Piece& piece : in.at) {
           std::vector<float> squares(s.m.n_heads + s.m.n_kv_heads, 0.0f);
           for (size_t k = 0; k < piece.index.size(); ++k)
             if (piece.index[k] < nk) squares[piece.index[k] / hd] += piece.value[k] * piece.value[k];
           out.at.push_back(whole(std::move(squares)));
         }
         return out;
       }},
      {"rotary", [](State& s, const Data& in, bool along_row) { return s.head_transforms(in, along_row); }},
      {"qk_norm", [](State& s, const Data& in, bool along_row) { return s.head_transforms(in, along_row); }},
      {"qkv_slices", [](State& s, const Data& in, bool along_row) { return s.head_transforms(in, along_row); }},
      {"activation",
       [](State& s, const Data& in, bool along_row) {
         return s.each_slice(in, along_row, [&](size_t p, const std::string&) { return s.activation_of(in.at[p]); });
       }},
      // A routed expert's down-projection slices times its router weight.
      {"expert_scale",
       [](State& s, const Data& in, bool along_row) {
         const float weight = s.routing.at(uint32_t(s.block_index - 1));
         return s.each_slice(in, along_row, [&](size_t p, const std::string&) {
           Piece out = in.at[p];
           for (float& v : out.value) v = s.rounded(v * weight);
           return out;
         });
       }},
      // Each slice's largest logit and its index.
      {"argmax_slice",
       [](State& s, const Data& in, bool along_row) {
         return s.each_slice(in, along_row, [&](size_t p, const std::string&) {
           const Piece& logits = in.at[p];
           size_t best = 0;
           for (size_t k = 1; k < logits.value.size(); ++k)
             if (logits.value[k] > logits.value[best]) best = k;
           return logits.value.empty() ? whole({-INFINITY, 0}) : whole({logits.value[best], float(logits.index[best])});
         });
       }},
  };
  const std::map<std::string, Elementwise>& ops = on_line ? line_ops : root_ops;
  const auto found = ops.find(label);
  return found == ops.end() ? nullptr : &found->second;
}

std::string Evaluator::State::unregistered_elementwise(const mapping::Plan& plan) {
  for (const Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      for (const auto& step : block.steps) {
        const bool on_root = dynamic_cast<const mapping::RootComputeStep*>(step.get()) != nullptr;
        const bool on_line = dynamic_cast<const mapping::LineComputeStep*>(step.get()) != nullptr;
        if ((on_root || on_line) && !elementwise(step->label(), on_line))
          return fmt::format(
              "{}: step {} has no element-wise meaning registered (sim/functional/evaluator_elementwise.cpp)",
              region.name, step->label());
      }
  return "";
}

// q/k norm and rotary of each QKV slice; after the statistics' all-reduce
// (qk_norm_stats), with the heads' sums of squares the line brought back.
Data Evaluator::State::head_transforms(const Data& in, bool along_row) {
  if (qkv_slices.at.empty())
    return each_slice(in, along_row,
                      [&](size_t p, const std::string& where) { return head_transform(in.at[p], where); });
  if (qkv_slices.at.size() != in.at.size()) fail("the head sums did not return to every QKV slice");
  Data out = each_slice(in, along_row, [&](size_t p, const std::string& where) {
    return head_transform(qkv_slices.at[p], where, &in.at[p].value);
  });
  qkv_slices = Data{};
  return out;
}

}  // namespace wafersim::functional
