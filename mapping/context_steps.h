#pragma once
// A value that depends on an iteration only through its context and never
// shrinks as the context grows (each attention tile holds as many positions or
// more, and every step is a max or a sum of its inputs), tabulated over the
// contexts a run visits without evaluating it at each: where two contexts give
// the same value, every context between gives it too, so bisection finds each
// step of the function with a few evaluations. What makes the closed form's
// cost independent of the token count (mapping/region_spans.h, mapping/timeline.cpp).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/tile_program.h"

namespace wafersim::mapping {

template <class Value>
class ContextSteps {
 public:
  // `contexts`: every context the run visits, sorted, without repeats.
  ContextSteps(const std::vector<uint64_t>& contexts, const std::function<Value(uint64_t context)>& evaluate) {
    if (contexts.empty()) return;
    const Value first = evaluate_at(evaluate, contexts.front());
    const Value last = contexts.size() > 1 ? evaluate_at(evaluate, contexts.back()) : first;
    append(contexts.front(), first);
    if (contexts.size() > 1) fill(contexts, evaluate, 0, contexts.size() - 1, first, last);
  }
  // The same when the value can change only at `starts` (sorted, without
  // repeats, each a context the run visits, the first of them among them):
  // one evaluation per start, none to find them.
  struct KnownStarts {};
  ContextSteps(KnownStarts, const std::vector<uint64_t>& starts,
               const std::function<Value(uint64_t context)>& evaluate) {
    for (uint64_t start : starts) append(start, evaluate_at(evaluate, start));
  }

  // The value at a context from the constructor's list.
  const Value& at(uint64_t context) const {
    auto after = std::upper_bound(pieces_.begin(), pieces_.end(), context,
                                  [](uint64_t c, const std::pair<uint64_t, Value>& piece) { return c < piece.first; });
    if (after == pieces_.begin()) throw std::logic_error("ContextSteps: context below the first one visited");
    return std::prev(after)->second;
  }
  // Times the function was evaluated: a measure of the saving.
  uint64_t evaluations() const { return evaluations_; }
  // Where the value changes: the first context of each piece, in order.
  std::vector<uint64_t> starts() const {
    std::vector<uint64_t> out;
    out.reserve(pieces_.size());
    for (const auto& piece : pieces_) out.push_back(piece.first);
    return out;
  }

 private:
  using Evaluate = std::function<Value(uint64_t)>;
  Value evaluate_at(const Evaluate& evaluate, uint64_t context) {
    ++evaluations_;
    return evaluate(context);
  }
  // Pieces for contexts[lo + 1 .. hi], given the values at lo and hi.
  void fill(const std::vector<uint64_t>& contexts, const Evaluate& evaluate, size_t lo, size_t hi,
            const Value& value_lo, const Value& value_hi) {
    if (value_lo == value_hi) return;  // constant on [lo, hi]: the piece at lo covers it
    if (hi == lo + 1) {
      append(contexts[hi], value_hi);
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    const Value value_mid = evaluate_at(evaluate, contexts[mid]);
    fill(contexts, evaluate, lo, mid, value_lo, value_mid);
    fill(contexts, evaluate, mid, hi, value_mid, value_hi);
  }
  void append(uint64_t first_context, const Value& value) {
    if (!pieces_.empty() && pieces_.back().second == value) return;
    pieces_.emplace_back(first_context, value);
  }

  std::vector<std::pair<uint64_t, Value>> pieces_;  // (first context, value), by context
  uint64_t evaluations_ = 0;
};

// One context for every iteration: what a ContextSteps evaluation runs a chain
// with. Never asked about routing (a chain with routed experts depends on more).
class AtContext : public IterationInputs {
 public:
  explicit AtContext(uint64_t context) : context_(context) {}
  uint64_t context(uint64_t) const override { return context_; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override {
    throw std::logic_error("AtContext: a chain with routed experts depends on more than the context");
  }

 private:
  uint64_t context_;
};

// One context for every iteration and every expert routed: the busiest an MoE
// layer gets at that context (what the compiler times expert-block shapes with).
class EveryExpertAt : public IterationInputs {
 public:
  explicit EveryExpertAt(uint64_t context) : context_(context) {}
  uint64_t context(uint64_t) const override { return context_; }
  bool expert_routed(uint64_t, uint32_t, uint32_t) const override { return true; }

 private:
  uint64_t context_;
};

// The iteration's inputs, noting whether the context was asked for, and
// whether the routing was.
class ContextWatch : public IterationInputs {
 public:
  explicit ContextWatch(const IterationInputs& inputs) : inputs_(inputs) {}
  uint64_t context(uint64_t iteration) const override {
    read_ = true;
    return inputs_.context(iteration);
  }
  bool expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t expert) const override {
    routing_read_ = true;
    return inputs_.expert_routed(iteration, moe_layer, expert);
  }
  void routed_experts(uint64_t iteration, uint32_t moe_layer, uint32_t count,
                      std::vector<uint32_t>& out) const override {
    routing_read_ = true;
    inputs_.routed_experts(iteration, moe_layer, count, out);
  }
  bool any_expert_routed(uint64_t iteration, uint32_t moe_layer, uint32_t first, uint32_t count) const override {
    routing_read_ = true;
    return inputs_.any_expert_routed(iteration, moe_layer, first, count);
  }
  bool read() const { return read_; }
  bool routing_read() const { return routing_read_; }

 private:
  const IterationInputs& inputs_;
  mutable bool read_ = false, routing_read_ = false;
};

}  // namespace wafersim::mapping
