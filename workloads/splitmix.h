#pragma once
// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): integer arithmetic only, so
// every platform draws the same numbers for the same seed. The router, the
// request streams and speculative acceptance all draw from it.
#include <cstdint>

namespace wafersim::workloads {

// The generator's output for counter value x (its state after x was added).
inline uint64_t splitmix64_hash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The next number of the sequence whose state is `state`, advancing it.
inline uint64_t splitmix64_next(uint64_t& state) {
  const uint64_t x = state;
  state += 0x9e3779b97f4a7c15ull;
  return splitmix64_hash(x);
}

}  // namespace wafersim::workloads
