#include "sim/functional/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "sim/functional/program_check.h"
#include "sim/functional/reference.h"

namespace wafersim::functional {

namespace {

struct Error {
  double abs = 0, rel = 0;
  size_t slice = 0;  // with the largest error
};

Error error_of(const std::vector<TileSlice>& slices, const std::vector<double>& reference) {
  double scale = 0;
  for (double v : reference) scale = std::max(scale, std::fabs(v));
  Error error;
  for (size_t s = 0; s < slices.size(); ++s)
    for (size_t k = 0; k < slices[s].index.size(); ++k) {
      const double d = std::fabs(double(slices[s].value[k]) - reference.at(slices[s].index[k]));
      if (!(d <= error.abs)) error.abs = std::isnan(d) ? INFINITY : d, error.slice = s;
    }
  error.rel = scale > 0 ? error.abs / scale : error.abs;
  return error;
}

Error error_of(const std::vector<float>& values, const std::vector<double>& reference) {
  TileSlice slice;
  for (uint32_t k = 0; k < values.size(); ++k) slice.index.push_back(k);
  slice.value = values;
  return error_of(std::vector<TileSlice>{slice}, reference);
}

const char* phase_name(const mapping::Plan& plan) {
  return plan.phase == mapping::Phase::Prefill ? "prefill" : "decode";
}

// The most tiles a partial sum can pass on its way to the root of a line.
uint32_t longest_line(const mapping::Plan& plan) {
  uint32_t longest = 1;
  for (const mapping::Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks) longest = std::max({longest, block.geo.rows, block.geo.cols});
  return longest;
}

}  // namespace

double functional_tolerance(const mapping::Plan& plan) {
  const workloads::ModelSpec& m = plan.model;
  // Each layer rounds the activations about 8 times (norm, q/k/v, KV entry,
  // attention output, residual, norm, activation, residual), each time by a
  // relative u at most; independent roundings add up like a random walk, so
  // sqrt(8 L + 4) u for L layers (+4: embedding, final norm, logits, argmax).
  // Sums are fp32: n terms add about sqrt(n) 2^-24, which dominates u only
  // when the activations are fp32 themselves. Every output is compared
  // relative to its largest element. Factor 4: the largest error measured on
  // the tiny models is 0.66 of sqrt(8 L + 4) u in bf16, 0.56 in fp16 and 0.12
  // in fp32 (docs/VALIDATION.md, "Numbers"). Partial sums in a narrower
  // format (mapping.partial_sum_dtype) are rounded at every tile of their
  // line they pass, so at most n times on a line of n tiles: sqrt(n) u.
  const double widest = double(std::max(
      {uint64_t(m.d_model), uint64_t(m.ffn_dim), uint64_t(m.moe.expert_ffn_dim), uint64_t(m.n_heads) * m.head_dim}));
  const double u = std::max({unit_roundoff(m.activation_dtype), unit_roundoff(m.kv_dtype),
                             std::sqrt(widest) * unit_roundoff(Dtype::FP32),
                             std::sqrt(double(longest_line(plan))) * unit_roundoff(plan.options.partial_sum)});
  return 4.0 * u * std::sqrt(8.0 * m.n_layers + 4.0);
}

FunctionalReport check_functional(const mapping::Plan& plan, std::vector<DroppedPartialSum> faults,
                                  const mapping::Plan* prefill) {
  const auto begin = std::chrono::steady_clock::now();
  const workloads::ModelSpec& m = plan.model;
  const workloads::WorkloadSpec& workload = plan.workload;
  // The prompt passes the prefill plan when the workload times one (the one timed, or compiled here alike).
  std::optional<mapping::Plan> compiled;
  if (!workload.prefill)
    prefill = nullptr;
  else if (!prefill)
    prefill = &compiled.emplace(mapping::compile_prefill_plan(plan));
  const ModelWeights weights(m, workload.seed);
  Evaluator evaluator(plan, weights, workload.batch, std::move(faults), prefill);
  Reference reference(weights, workload.batch);
  FunctionalReport report;
  report.tolerance = functional_tolerance(plan);
  report.prefill_checked = prefill != nullptr;
  auto finish = [&] {
    report.tiles = evaluator.tiles_holding_weights();
    report.weight_bytes = 4 * evaluator.weight_floats();
    report.kv_bytes = 4 * evaluator.kv_floats();
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return report;
  };
  // The trees, rings and multicasts the evaluator follows must be the ones the engine's programs run.
  for (const mapping::Plan* p : {prefill, &plan}) {
    if (!p) continue;
    const std::string mismatch = program_tree_mismatch(*p);
    if (mismatch.empty()) continue;
    report.first = Divergence{0, 0, "", "", "", -1, 0, 0, 0, INFINITY, mismatch, phase_name(*p)};
    report.max_abs_error = report.max_rel_error = INFINITY;
    return finish();
  }
  uint64_t agree = 0;
  // One token's outputs against the reference's; false once the evaluation has to stop.
  auto compare = [&](const char* phase, uint32_t sequence, uint32_t token, uint64_t position, const TokenResult& got,
                     const std::vector<StepOutput>& outputs) {
    const ReferenceToken expected = reference.step(sequence, token, position, got.routed, report.tolerance);
    report.router_near_ties += expected.near_ties_followed;
    for (const StepOutput& output : outputs) {
      if (report.first) break;
      const int32_t layer = output.region->layer;
      const std::vector<double>& want =
          layer >= 0 ? expected.layers[size_t(layer)].at(output.value) : expected.outer.at(output.value);
      const Error error = error_of(output.slices, want);
      if (error.rel <= report.tolerance) continue;
      const TileSlice& worst = output.slices[error.slice];
      // The LM head of a prompt token is the decode plan's (the prefill plan has none).
      const char* plan_name = layer < 0 && output.region->kind == mapping::RegionKind::Head ? "decode" : phase;
      report.first = Divergence{sequence, position, output.region->name, output.step, output.value, layer, worst.wafer,
                                worst.x,  worst.y,  error.rel,           "",          plan_name};
    }
    ++report.tokens;
    for (const auto& [values, name] :
         {std::pair{&got.final_hidden, "final_hidden"}, std::pair{&got.logits, "logits"}}) {
      const Error error = error_of(*values, expected.outer.at(name));
      report.max_abs_error = std::max(report.max_abs_error, error.abs);
      report.max_rel_error = std::max(report.max_rel_error, error.rel);
    }
    agree += got.argmax == expected.argmax;
  };
  auto stopped = [&](const char* phase, uint32_t sequence, uint64_t position, const FunctionalError& error) {
    if (!report.first)
      report.first = Divergence{sequence, position, "", "", "", -1, 0, 0, 0, INFINITY, error.what(), phase};
    report.max_abs_error = report.max_rel_error = INFINITY;
  };
  // The token each sequence feeds at its next position: its prompt, then the argmax of the position before.
  std::vector<uint32_t> next(workload.batch);
  for (uint32_t sequence = 0; sequence < workload.batch; ++sequence)
    next[sequence] = prompt_token(workload.seed, sequence, 0, m.vocab_size);
  bool halted = false;
  if (prefill) {
    // Chunks in the plan's order (round k: chunk k of every sequence), every token's outputs kept per chunk.
    // In the prefill plan's chunks, which the compiler may have made smaller than the workload's to fit.
    const workloads::WorkloadSpec& chunked = prefill->workload;
    const uint64_t size = chunked.prefill_chunk_size();
    for (const auto& [sequence, chunk] : chunked.prefill_order()) {
      const uint64_t first = chunk * size, end = std::min(first + size, workload.prompt(sequence));
      std::vector<uint32_t> tokens;
      for (uint64_t position = first; position < end; ++position)
        tokens.push_back(prompt_token(workload.seed, sequence, position, m.vocab_size));
      std::vector<std::vector<StepOutput>> outputs(tokens.size());
      std::vector<TokenResult> got;
      try {
        got = evaluator.prefill_chunk(sequence, first, tokens,
                                      [&](size_t k, const StepOutput& output) { outputs[k].push_back(output); });
      } catch (const FunctionalError& error) {  // the plan lost or misplaced a slice
        stopped("prefill", sequence, first, error);
        halted = true;
        break;
      }
      for (size_t k = 0; k < tokens.size(); ++k) compare("prefill", sequence, tokens[k], first + k, got[k], outputs[k]);
      if (end == workload.prompt(sequence)) next[sequence] = got.back().argmax;
    }
  }
  for (uint32_t sequence = 0; sequence < workload.batch && !halted; ++sequence) {
    const uint64_t prompt = workload.prompt(sequence);
    const uint64_t from = prefill ? prompt : 0, positions = prompt + workload.decode_tokens;
    uint32_t token = next[sequence];
    for (uint64_t position = from; position < positions; ++position) {
      // The plan first, its step outputs kept; then the reference, following
      // the plan's expert choices where they are a near tie (reference.h).
      std::vector<StepOutput> outputs;
      TokenResult got;
      try {
        got = evaluator.step(sequence, token, position, [&](const StepOutput& output) { outputs.push_back(output); });
      } catch (const FunctionalError& error) {  // the plan lost or misplaced a slice
        stopped("decode", sequence, position, error);
        halted = true;
        break;
      }
      compare("decode", sequence, token, position, got, outputs);
      token = position + 1 < prompt ? prompt_token(workload.seed, sequence, position + 1, m.vocab_size) : got.argmax;
    }
  }
  report.argmax_agreement = report.tokens ? double(agree) / double(report.tokens) : 0;
  report.passed = !report.first && report.max_rel_error <= report.tolerance;
  return finish();
}

std::string functional_summary(const FunctionalReport& r) {
  std::string text = fmt::format(
      "functional: {} ({} tokens{}, max rel error {:.3g} vs tolerance {:.3g}, max abs error {:.3g}, argmax agreement "
      "{:.3f}, {:.2f} s)",
      r.passed ? "numbers match the reference" : "numbers DIVERGE", r.tokens,
      r.prefill_checked ? ", the prompt through the prefill plan" : "", r.max_rel_error, r.tolerance, r.max_abs_error,
      r.argmax_agreement, r.wall_seconds);
  if (r.first) {
    const Divergence& d = *r.first;
    if (!d.what.empty())
      text += fmt::format("\n  first divergence: {} plan, sequence {} position {}: {}", d.plan, d.sequence, d.position,
                          d.what);
    else
      text += fmt::format(
          "\n  first divergence: {} plan, sequence {} position {}, {} (layer {}), step {} ({}), tile (wafer {}, x {}, "
          "y {}): relative error {:.3g}",
          d.plan, d.sequence, d.position, d.region, d.layer, d.step, d.value, d.wafer, d.x, d.y, d.rel_error);
  }
  return text;
}

}  // namespace wafersim::functional
