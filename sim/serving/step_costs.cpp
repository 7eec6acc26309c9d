#include "sim/serving/step_costs.h"

#include <algorithm>
#include <cmath>

#include "workloads/workload_spec.h"

namespace wafersim::serving {

namespace {

// Sample contexts: enough that attention's steps (positions per tile) stay
// close to linear between them; the measured error is reported.
constexpr size_t kIntervals = 64;

// One item at a fixed context: a decode token routes its experts like the
// decode run does (by position), a prefill chunk reaches every expert.
class ContextInputs : public IterationInputs {
 public:
  ContextInputs(const workloads::ModelSpec& model, uint64_t seed, uint64_t context, bool prefill)
      : router_(seed, model.moe.n_experts, model.moe.top_k), context_(context), prefill_(prefill) {}
  uint64_t context(uint64_t) const override { return context_; }
  bool expert_routed(uint64_t, uint32_t moe_layer, uint32_t expert) const override {
    return prefill_ || router_.routed(0, context_ - 1, moe_layer, expert);
  }

 private:
  workloads::ExpertRouter router_;
  uint64_t context_;
  bool prefill_;
};

// A prefill chunk or a verify pass reaches every expert (its plan gives each an even share).
double region_cycles(const mapping::Plan& plan, size_t region, uint64_t context, uint64_t seed) {
  const ContextInputs inputs(plan.model, seed, context,
                             plan.phase == mapping::Phase::Prefill || plan.tokens_per_iteration > 1);
  return double(plan.regions[region].finish(mapping::Timed{}, inputs, 0).cycle);
}

}  // namespace

StepCosts::StepCosts(const mapping::Plan& decode, const mapping::Plan& prefill, uint64_t seed)
    : chunk_tokens_(prefill.tokens_per_iteration), largest_context_(std::max<uint64_t>(decode.model.max_positions, 2)) {
  const double step = double(largest_context_ - 1) / double(kIntervals);
  for (size_t k = 0; k <= kIntervals; ++k) contexts_.push_back(std::round(1 + step * double(k)));
  auto build = [&](const mapping::Plan& plan, Table& table, std::vector<double>& transit) {
    table.assign(plan.regions.size(), {});
    for (size_t r = 0; r < plan.regions.size(); ++r) {
      for (double context : contexts_) table[r].push_back(region_cycles(plan, r, uint64_t(context), seed));
      for (size_t k = 0; k < kIntervals; ++k) {
        const uint64_t middle = uint64_t((contexts_[k] + contexts_[k + 1]) / 2);
        const double exact = region_cycles(plan, r, middle, seed);
        const double error = std::fabs(lookup(table, r, double(middle)) - exact) / std::max(exact, 1.0);
        interpolation_error_ = std::max(interpolation_error_, error);
      }
      transit.push_back(r < plan.region_sends.size() ? double(mapping::send_cycles(plan.hw, plan.region_sends[r]))
                                                     : 0.0);
    }
  };
  build(decode, decode_, decode_transit_);
  build(prefill, prefill_, prefill_transit_);
}

void StepCosts::speculate(const mapping::Plan& chunk_verify, const mapping::Plan& draft,
                          const workloads::SpeculativeSpec& spec, uint64_t seed) {
  speculative_ = spec;
  if (spec.verify == workloads::VerifyKind::Pipelined) {
    verify_items_ = spec.draft_tokens + 1;  // decode items, costed as decode tokens
  } else {
    // A chunk pass is costed at its tokens' mean context, k / 2 past its first.
    const uint64_t offset = spec.draft_tokens / 2;
    for (size_t r = 0; r < chunk_verify.regions.size(); ++r)
      for (size_t k = 0; k < contexts_.size(); ++k)
        decode_[r][k] = region_cycles(chunk_verify, r, uint64_t(contexts_[k]) + offset, seed);
  }
  draft_.clear();
  for (double context : contexts_) {
    double chain = 0;  // one draft token through every region and back to the embedding
    for (size_t r = 0; r < draft.regions.size(); ++r)
      chain += region_cycles(draft, r, uint64_t(context), seed) +
               (r < draft.region_sends.size() ? double(mapping::send_cycles(draft.hw, draft.region_sends[r])) : 0.0);
    draft_.push_back(chain * spec.draft_tokens);
  }
}

double StepCosts::draft_cycles(double context) const {
  if (draft_.empty()) return 0;
  const auto [k, fraction] = interpolation(context);
  return draft_[k] + (draft_[k + 1] - draft_[k]) * fraction;
}

StepCosts::Interpolation StepCosts::interpolation(double context) const {
  const double step = contexts_[1] - contexts_[0];
  const double position = std::clamp((context - contexts_[0]) / step, 0.0, double(kIntervals));
  const size_t k = std::min(size_t(position), kIntervals - 1);
  return {k, (context - contexts_[k]) / (contexts_[k + 1] - contexts_[k])};
}

double StepCosts::lookup(const Table& table, size_t region, double context) const {
  const std::vector<double>& row = table[region];
  if (row.size() < contexts_.size()) {
    // While the table is being built: the samples so far are all there is.
    return row.back();
  }
  const auto [k, fraction] = interpolation(context);
  return row[k] + (row[k + 1] - row[k]) * fraction;
}

double StepCosts::service_cycles(ItemKind kind, size_t region, double context) const {
  return lookup(kind == ItemKind::Decode ? decode_ : prefill_, region, context);
}

void StepCosts::service_cycles(ItemKind kind, double context, std::vector<double>& out) const {
  const Table& table = kind == ItemKind::Decode ? decode_ : prefill_;
  const auto [k, fraction] = interpolation(context);
  out.resize(table.size());
  for (size_t r = 0; r < table.size(); ++r) out[r] = table[r][k] + (table[r][k + 1] - table[r][k]) * fraction;
}

void StepCosts::scale(ItemKind kind, const std::vector<double>& ratios) {
  Table& table = kind == ItemKind::Decode ? decode_ : prefill_;
  for (size_t r = 0; r < table.size(); ++r)
    for (double& cycles : table[r]) cycles *= ratios.at(r);
}

double StepCosts::transit_cycles(ItemKind kind, size_t region) const {
  return kind == ItemKind::Decode ? decode_transit_[region] : prefill_transit_[region];
}

}  // namespace wafersim::serving
