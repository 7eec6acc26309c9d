#pragma once
// What one item costs at each region root of the layer pipeline, from the
// compiled plans through their closed form (Region::finish): a decode token of
// one sequence at a given context, and a prefill chunk at its tokens' mean
// context. Built once per serving run by evaluating every region at a few
// contexts; between them the cycles are interpolated linearly (the largest
// error against the closed form at the midpoints is measured and reported).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "workloads/speculative_spec.h"

namespace wafersim::serving {

enum class ItemKind { Decode, Prefill };

class StepCosts {
 public:
  // `decode` and `prefill` are the plan of the experiment and its prefill plan
  // (whose chunk is prefill.tokens_per_iteration tokens).
  StepCosts(const mapping::Plan& decode, const mapping::Plan& prefill, uint64_t seed);

  // Region roots an item of this kind passes: every decode region, or all but the LM head.
  size_t regions(ItemKind kind) const { return kind == ItemKind::Decode ? decode_.size() : prefill_.size(); }
  // Cycles region r's root is busy with an item at `context` attended positions.
  double service_cycles(ItemKind kind, size_t region, double context) const;
  // All regions at once into `out` (size regions(kind)): one interpolation lookup.
  void service_cycles(ItemKind kind, double context, std::vector<double>& out) const;
  // Cycles from region r's root to the next region's (the LM head's to the embedding's).
  double transit_cycles(ItemKind kind, size_t region) const;

  uint32_t chunk_tokens() const { return chunk_tokens_; }
  uint64_t largest_context() const { return largest_context_; }
  // Largest relative difference between the interpolation and the closed form,
  // at the midpoints between samples, over every region of both plans.
  double interpolation_error() const { return interpolation_error_; }
  size_t samples() const { return contexts_.size(); }

  // Speculative decoding: a decode item becomes a speculative step, the
  // target's verify pass over k + 1 positions after the draft's k tokens
  // (`draft`'s whole chain, k times). A pipelined pass is verify_items() = k + 1
  // decode items entering one after another; a chunk pass is one item costed
  // by `chunk_verify` (compile_verify_plan, the same regions as the decode
  // plan). The draft is a per-sequence delay before each verify pass, not a
  // shared server: as if its layer pipeline had room for every sequence.
  void speculate(const mapping::Plan& chunk_verify, const mapping::Plan& draft, const workloads::SpeculativeSpec& spec,
                 uint64_t seed);
  bool speculative() const { return speculative_.has_value(); }
  // Decode items one step sends through the pipeline: 1, or k + 1 for a pipelined verify pass.
  uint32_t verify_items() const { return verify_items_; }
  // Cycles of the draft's k tokens before a verify pass at `context` (0 without speculation).
  double draft_cycles(double context) const;
  // Tokens step `step` of request `request` emits (1 without speculation).
  uint32_t step_tokens(uint64_t request, uint64_t step) const {
    return speculative_ ? speculative_->step_tokens(request, step) : 1;
  }

  // Measured cycles replace the closed form's: region r's cycles at every
  // context are multiplied by ratios[r] (measured / closed form at the
  // context the measurement was made at). ratios has regions(kind) values.
  void scale(ItemKind kind, const std::vector<double>& ratios);

 private:
  using Table = std::vector<std::vector<double>>;  // [region][sample]
  // The samples k and k + 1 around `context`, and how far between them it lies.
  struct Interpolation {
    size_t k = 0;
    double fraction = 0;
  };
  Interpolation interpolation(double context) const;
  double lookup(const Table& table, size_t region, double context) const;

  std::vector<double> contexts_;  // sample contexts, evenly spaced from 1
  Table decode_, prefill_;
  std::vector<double> decode_transit_, prefill_transit_;
  std::vector<double> draft_;  // the draft's k tokens at each sample context; empty without speculation
  std::optional<workloads::SpeculativeSpec> speculative_;
  uint32_t verify_items_ = 1;
  uint32_t chunk_tokens_ = 1;
  uint64_t largest_context_ = 1;
  double interpolation_error_ = 0;
};

}  // namespace wafersim::serving
