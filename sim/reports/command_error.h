#pragma once
// A command's failure with the exit code the program ends with: what the
// reports library throws for bad input that only a command can name (an
// output path, a --context), and what the Python module turns into its errors.
#include <stdexcept>
#include <string>

#include "sim/reports/exit_codes.h"

namespace wafersim::reports {

// kExitBadInput, kExitDoesNotFit, ...
class CommandError : public std::runtime_error {
 public:
  CommandError(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace wafersim::reports
