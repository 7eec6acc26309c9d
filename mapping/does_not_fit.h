#pragma once
// The compiler's answer when a valid experiment asks more of the hardware than it has.
#include <stdexcept>

namespace wafersim::mapping {

class DoesNotFitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace wafersim::mapping
