#include "models/config/parse_value.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "models/config/source_text.h"
#include "models/config/text.h"
#include "models/config/value_text.h"

namespace wafersim::config {

const char* node_kind(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "nothing";
  return "a scalar";
}

namespace {

std::optional<int64_t> parse_int(const std::string& text) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return std::nullopt;
  for (size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return int64_t(value);
}

std::optional<double> parse_float(const std::string& text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  bool digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
      return std::nullopt;
  }
  if (!digit) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(const std::string& text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

// A byte count written with a unit: "64kB" (10^3), "48KiB" (2^10), "1.5 MiB", up to TB and TiB.
// SI prefixes are powers of 1000 and binary ones powers of 1024; the result must be whole bytes.
std::optional<int64_t> parse_size(const std::string& text) {
  static const std::vector<std::pair<std::string, double>> units = {{"TiB", 1099511627776.0},
                                                                    {"GiB", 1073741824.0},
                                                                    {"MiB", 1048576.0},
                                                                    {"KiB", 1024.0},
                                                                    {"kiB", 1024.0},
                                                                    {"TB", 1e12},
                                                                    {"GB", 1e9},
                                                                    {"MB", 1e6},
                                                                    {"kB", 1e3},
                                                                    {"B", 1.0}};
  for (const auto& [suffix, factor] : units) {
    if (text.size() <= suffix.size() || text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string number = text.substr(0, text.size() - suffix.size());
    while (!number.empty() && number.back() == ' ') number.pop_back();
    for (char c : number)
      if (!((c >= '0' && c <= '9') || c == '.')) return std::nullopt;
    const std::optional<double> value = parse_float(number);
    if (!value) return std::nullopt;
    const double bytes = *value * factor;
    if (bytes != std::floor(bytes) || bytes > 9.2e18) return std::nullopt;
    return int64_t(bytes);
  }
  return std::nullopt;
}

}  // namespace

Value parse_value(const ParamSpec& spec, const YAML::Node& node, const SourceLocation& where, const std::string& file) {
  auto wrong = [&](const std::string& got) {
    return ConfigError(where, spec.path, spec.path + " expects " + type_phrase(spec) + ", got " + got);
  };
  if (node.IsNull()) throw ConfigError(where, spec.path, spec.path + " has no value; expected " + type_phrase(spec));
  if (spec.type == ParamType::IntList || (spec.type == ParamType::IntOrList && node.IsSequence())) {
    if (!node.IsSequence()) throw wrong(node.IsScalar() ? quoted(node.Scalar()) : node_kind(node));
    std::vector<int64_t> list;
    for (size_t i = 0; i < node.size(); ++i) {
      const YAML::Node& element = node[i];
      std::optional<int64_t> number;
      if (element.IsScalar() && element.Tag() != "!") number = parse_int(element.Scalar());
      if (!number)
        // Overrides have no lines: their elements are reported at the override itself.
        throw ConfigError(where.line > 0 ? location_of(file, element.Mark()) : where, spec.path,
                          spec.path + "[" + std::to_string(i) + "] expects an integer, got " +
                              (element.IsScalar() ? quoted(element.Scalar()) : node_kind(element)));
      list.push_back(*number);
    }
    return list;
  }
  if (!node.IsScalar()) throw wrong(node_kind(node));
  const std::string& text = node.Scalar();
  // A quoted "5" is a string: numbers and flags must be written plain.
  const bool plain = node.Tag() != "!";
  switch (spec.type) {
    case ParamType::Int:
    case ParamType::IntOrList:
      if (auto number = parse_int(text); number && plain) return *number;
      if (spec.unit == "bytes") {
        if (auto bytes = parse_size(text); bytes && plain) return *bytes;
        // Written of SRAM, KB means 1,024 bytes as often as 1,000: make the writer say which.
        if (plain && text.size() > 2 && text.compare(text.size() - 2, 2, "KB") == 0 &&
            parse_size(text.substr(0, text.size() - 2) + "kB"))
          throw ConfigError(where, spec.path,
                            spec.path + " = " + quoted(text) + " is ambiguous: write " +
                                quoted(text.substr(0, text.size() - 2) + "kB") + " for powers of 1000 or " +
                                quoted(text.substr(0, text.size() - 2) + "KiB") + " for powers of 1024");
      }
      break;
    case ParamType::IntOrAuto:
      if (text == "auto") return text;
      if (auto number = parse_int(text); number && plain) return *number;
      break;
    case ParamType::Float:
      if (auto number = parse_float(text); number && plain) return *number;
      break;
    case ParamType::Bool:
      if (auto flag = parse_bool(text); flag && plain) return *flag;
      break;
    case ParamType::String:
    case ParamType::Enum: return text;
    case ParamType::IntList: break;
  }
  throw wrong(plain ? quoted(text) : "the string " + quoted(text));
}

Value default_value(const ParamSpec& spec) {
  if (!spec.default_value) throw std::logic_error("parameter '" + spec.path + "' has no default");
  const SourceLocation where{"default", 0, 0};
  try {
    return parse_value(spec, YAML::Load(*spec.default_value), where, where.file);
  } catch (const std::exception& e) {
    throw std::logic_error("declared default of '" + spec.path + "' is invalid: " + e.what());
  }
}

}  // namespace wafersim::config
