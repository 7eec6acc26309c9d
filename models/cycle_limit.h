#pragma once
// A decode that takes more cycles than a backend can count: 2^64 for the
// closed form, SystemC's time limit for the engine. The input is valid but
// asks for a time no backend can represent, so the command refuses it.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace wafersim {

class CycleLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// a + b, or CycleLimitError when the sum does not fit 64 bits.
inline uint64_t add_cycles(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    throw CycleLimitError("the decode takes more than 2^64 - 1 cycles, more than a cycle count holds");
  return sum;
}

}  // namespace wafersim
