#pragma once
// Every configuration parameter is declared once, here-shaped: path, type, unit,
// default, range and description. Validation, `wafersim describe params` and the
// docs all read these declarations.
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace wafersim::config {

enum class ParamType {
  Int,        // 64-bit signed integer
  Float,      // double
  Bool,       // true / false
  String,     // free text
  Enum,       // one of `choices`
  IntList,    // list of integers, e.g. [0, 2, 4]
  IntOrAuto,  // an integer, or the word "auto" (stored as 0)
  IntOrList,  // an integer, or a list of integers (e.g. one per sequence)
};

const char* to_string(ParamType type);

struct ParamSpec {
  std::string path;  // "hardware.fabric.hop_latency_cycles"
  ParamType type = ParamType::Int;
  std::string unit;                                       // "cycles", "bytes", "GHz", "" when dimensionless
  std::optional<std::string> default_value;               // YAML text of the default; nullopt = required
  double min = -std::numeric_limits<double>::infinity();  // inclusive numeric range
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // Enum only
  std::string description;
};

class Schema {
 public:
  Schema() = default;
  // The parameters each of `declarations` declares, in order (declare_hardware_params, ...).
  explicit Schema(std::initializer_list<void (*)(Schema&)> declarations);

  // Declares a parameter; declaring one path twice is a programming error (throws std::logic_error).
  void add(ParamSpec spec);

  const ParamSpec* find(const std::string& path) const;
  const std::vector<ParamSpec>& params() const { return params_; }

  // True when `path` is a declared section, i.e. a prefix of some parameter ("hardware.fabric").
  bool is_section(const std::string& path) const;
  // Immediate child keys of a section ("hardware" -> {"grid_width", "fabric", ...}), for suggestions.
  std::vector<std::string> child_keys(const std::string& section) const;

 private:
  std::vector<ParamSpec> params_;
};

// Shorthands for declarations, so a declaration reads as one line.
ParamSpec int_param(std::string path, std::string unit, std::optional<std::string> default_value, double min,
                    double max, std::string description);
ParamSpec float_param(std::string path, std::string unit, std::optional<std::string> default_value, double min,
                      double max, std::string description);
ParamSpec bool_param(std::string path, bool default_value, std::string description);
ParamSpec string_param(std::string path, std::optional<std::string> default_value, std::string description);
ParamSpec enum_param(std::string path, std::vector<std::string> choices, std::optional<std::string> default_value,
                     std::string description);
// `spec` with another type: int_param's arguments for an IntList, IntOrAuto or IntOrList parameter.
ParamSpec as_type(ParamType type, ParamSpec spec);

}  // namespace wafersim::config
