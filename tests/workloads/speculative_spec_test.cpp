// The acceptance draws of speculative decoding against their closed form.
#include "workloads/speculative_spec.h"

#include <cmath>

#include <catch2/catch.hpp>

using namespace wafersim::workloads;

namespace {

SpeculativeSpec spec_of(AcceptanceKind kind, double rate, uint32_t k, uint64_t seed = 1) {
  SpeculativeSpec spec;
  spec.acceptance = kind;
  spec.rate = rate;
  spec.draft_tokens = k;
  spec.seed = seed;
  return spec;
}

double mean_tokens(const SpeculativeSpec& spec, uint64_t sequence, uint64_t steps) {
  uint64_t tokens = 0;
  for (uint64_t step = 0; step < steps; ++step) tokens += spec.step_tokens(sequence, step);
  return double(tokens) / double(steps);
}

}  // namespace

TEST_CASE("speculative steps emit (1 - a^(k+1)) / (1 - a) tokens in expectation", "[speculative]") {
  CHECK(spec_of(AcceptanceKind::Fixed, 0.0, 4).expected_tokens_per_step() == 1.0);
  CHECK(spec_of(AcceptanceKind::Fixed, 1.0, 4).expected_tokens_per_step() == 5.0);
  CHECK(spec_of(AcceptanceKind::Fixed, 0.5, 2).expected_tokens_per_step() == Approx(1.75));
  for (const double rate : {0.2, 0.6, 0.85})
    for (const uint32_t k : {1u, 4u, 8u}) {
      INFO("rate " << rate << ", k " << k);
      const double expected = (1 - std::pow(rate, k + 1)) / (1 - rate);
      // Fixed: the running total is the expectation rounded down, so it is off by less than a token.
      const SpeculativeSpec fixed = spec_of(AcceptanceKind::Fixed, rate, k);
      CHECK(std::abs(mean_tokens(fixed, 0, 1000) * 1000 - expected * 1000) < 1);
      // Sampled: 20,000 draws, within five standard errors (the variance is below (k + 1)^2 / 4).
      const SpeculativeSpec sampled = spec_of(AcceptanceKind::Sampled, rate, k);
      CHECK(std::abs(mean_tokens(sampled, 3, 20000) - expected) < 5 * (k + 1) / 2.0 / std::sqrt(20000.0));
    }
}

TEST_CASE("sampled draws stay within 1 .. k + 1 and depend on seed, sequence and step alone", "[speculative]") {
  const SpeculativeSpec spec = spec_of(AcceptanceKind::Sampled, 0.7, 3, 11);
  bool saw_low = false, saw_high = false;
  for (uint64_t step = 0; step < 2000; ++step) {
    const uint32_t tokens = spec.step_tokens(5, step);
    CHECK(tokens >= 1);
    CHECK(tokens <= 4);
    saw_low |= tokens == 1;
    saw_high |= tokens == 4;
    CHECK(spec.step_tokens(5, step) == tokens);
  }
  CHECK(saw_low);
  CHECK(saw_high);
  uint64_t differ = 0;
  const SpeculativeSpec reseeded = spec_of(AcceptanceKind::Sampled, 0.7, 3, 12);
  for (uint64_t step = 0; step < 200; ++step) differ += reseeded.step_tokens(5, step) != spec.step_tokens(5, step);
  CHECK(differ > 50);
}
