#pragma once
// Errors a user can fix. The CLI prints what() on one line and exits with exit_code().
#include <stdexcept>
#include <string>

namespace wafersim::config {

// Where a value came from: a file position (1-based line and column), or an
// origin such as "--set" with line 0.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "exp.yaml:7:5", "exp.yaml", "--set"
};

enum ExitCode : int { kExitOk = 0, kExitInternal = 1, kExitBadInput = 2, kExitDoesNotFit = 3 };

class ConfigError : public std::runtime_error {
 public:
  // message is the whole single line, e.g.
  // "exp.yaml:7:5: unknown key 'hop_latency' in hardware.fabric; did you mean 'hop_latency_cycles'?"
  ConfigError(const SourceLocation& where, const std::string& key, const std::string& what,
              int exit_code = kExitBadInput);
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  int exit_code() const { return exit_code_; }

 private:
  SourceLocation where_;
  std::string key_;
  int exit_code_;
};

// A valid configuration that asks more of the hardware than it has (exit code 3).
class DoesNotFitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace wafersim::config
