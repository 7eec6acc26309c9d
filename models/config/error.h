#pragma once
// Errors in a configuration a user can fix: the CLI prints what() on one line (bad input).
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

class ConfigError : public std::runtime_error {
 public:
  // message is the whole single line, e.g.
  // "exp.yaml:7:5: unknown key 'hop_latency' in hardware.fabric; did you mean 'hop_latency_cycles'?"
  ConfigError(const SourceLocation& where, const std::string& key, const std::string& what);
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  SourceLocation where_;
  std::string key_;
};

}  // namespace wafersim::config
