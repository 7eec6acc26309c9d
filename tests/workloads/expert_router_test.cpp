#include <algorithm>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/workload_spec.h"

using wafersim::workloads::ExpertRouter;

namespace {
std::vector<uint32_t> route(const ExpertRouter& router, uint64_t sequence, uint64_t token, uint32_t layer) {
  std::vector<uint32_t> out(router.top_k());
  router.route(sequence, token, layer, out.data());
  return out;
}
}  // namespace

TEST_CASE("router picks top_k distinct, sorted experts in range", "[router]") {
  const ExpertRouter router(7, 128, 8);
  for (uint64_t token = 0; token < 500; ++token) {
    const std::vector<uint32_t> experts = route(router, token % 5, token, uint32_t(token % 36));
    REQUIRE(experts.size() == 8);
    CHECK(std::is_sorted(experts.begin(), experts.end()));
    CHECK(std::adjacent_find(experts.begin(), experts.end()) == experts.end());
    CHECK(experts.back() < 128);
  }
}

TEST_CASE("router with top_k = n_experts routes to every expert", "[router]") {
  const ExpertRouter router(3, 8, 8);
  CHECK(route(router, 1, 2, 3) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("router is deterministic and independent of call order", "[router]") {
  const ExpertRouter a(11, 64, 4), b(11, 64, 4);
  std::vector<std::vector<uint32_t>> forward, backward;
  for (uint64_t token = 0; token < 100; ++token) forward.push_back(route(a, 2, token, 5));
  for (uint64_t token = 100; token-- > 0;) backward.push_back(route(b, 2, token, 5));
  std::reverse(backward.begin(), backward.end());
  CHECK(forward == backward);
}

TEST_CASE("router choice depends on seed, sequence, token and layer", "[router]") {
  const ExpertRouter router(5, 128, 4), other_seed(6, 128, 4);
  const std::vector<uint32_t> base = route(router, 0, 0, 0);
  // Four of 128 experts: two independent draws coincide with probability ~1e-7.
  CHECK(route(router, 1, 0, 0) != base);
  CHECK(route(router, 0, 1, 0) != base);
  CHECK(route(router, 0, 0, 1) != base);
  CHECK(route(other_seed, 0, 0, 0) != base);
}

TEST_CASE("router matches an independent implementation of splitmix64 + partial Fisher-Yates", "[router]") {
  // Expected values computed outside this code base from the documented algorithm:
  // state = splitmix64 chained over seed, sequence ^, token ^, layer ^; then for
  // i < k: state = splitmix64(state), swap(a[i], a[i + state % (n - i)]).
  CHECK(route(ExpertRouter(1, 128, 4), 0, 0, 0) == std::vector<uint32_t>{18, 26, 101, 117});
  CHECK(route(ExpertRouter(1, 128, 4), 3, 1000, 35) == std::vector<uint32_t>{36, 112, 113, 117});
  CHECK(route(ExpertRouter(42, 8, 2), 7, 5, 1) == std::vector<uint32_t>{2, 6});
  CHECK(route(ExpertRouter(7, 128, 8), 0, 0, 0) == std::vector<uint32_t>{5, 34, 53, 58, 74, 85, 88, 119});
}

TEST_CASE("router spreads load evenly over experts", "[router]") {
  const ExpertRouter router(9, 8, 2);
  std::vector<uint64_t> load(8, 0);
  const uint64_t tokens = 40000;
  for (uint64_t token = 0; token < tokens; ++token)
    for (uint32_t expert : route(router, 0, token, 0)) ++load[expert];
  const double expected = double(tokens) * 2 / 8;  // 10000; binomial sd ~ 87
  for (uint64_t count : load) CHECK(std::abs(double(count) - expected) < 0.05 * expected);
}

TEST_CASE("routed() agrees with route()", "[router]") {
  const ExpertRouter router(13, 16, 3);
  for (uint64_t token = 0; token < 50; ++token) {
    const std::vector<uint32_t> experts = route(router, 1, token, 2);
    const std::set<uint32_t> chosen(experts.begin(), experts.end());
    for (uint32_t expert = 0; expert < 16; ++expert)
      CHECK(router.routed(1, token, 2, expert) == (chosen.count(expert) == 1));
  }
}
