#include "models/config/value_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "models/config/text.h"

namespace wafersim::config {

namespace {

std::string lower(std::string text) {
  for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool reads_back_plain(const std::string& text) {
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (unsigned char c : text)
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.' && c != '/' && c != '+') return false;
  static const char* const kSpecial[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  return std::none_of(std::begin(kSpecial), std::end(kSpecial), [&](const char* word) { return lower(text) == word; });
}

std::string range_text(const ParamSpec& spec) {
  std::string unit = spec.unit.empty() ? "" : " " + spec.unit;
  bool has_min = std::isfinite(spec.min), has_max = std::isfinite(spec.max);
  if (has_min && has_max) return "[" + format_number(spec.min) + ", " + format_number(spec.max) + "]" + unit;
  if (has_min) return ">= " + format_number(spec.min) + unit;
  if (has_max) return "<= " + format_number(spec.max) + unit;
  return "";
}

}  // namespace

std::string range_description(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Enum: return "one of: " + join(spec.choices);
    case ParamType::Int:
    case ParamType::Float:
    case ParamType::IntList:
    case ParamType::IntOrAuto:
    case ParamType::IntOrList: return range_text(spec);
    default: return "";
  }
}

std::string yaml_scalar(const std::string& text) {
  if (reads_back_plain(text)) return text;
  // Quotes and backslashes escaped here, control characters by one_line: both
  // are YAML double-quoted escapes.
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "\"" + one_line(escaped) + "\"";
}

std::string value_text(const Value& value) {
  struct Writer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return format_number(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return yaml_scalar(v); }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::vector<std::string> items;
      for (int64_t element : v) items.push_back(std::to_string(element));
      return "[" + join(items) + "]";
    }
  };
  return std::visit(Writer{}, value);
}

std::string type_phrase(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::Int:
      return spec.unit == "bytes" ? "an integer number of bytes or a size such as 48KiB, 64kB or 1.5MiB" : "an integer";
    case ParamType::Float: return "a number";
    case ParamType::Bool: return "true or false";
    case ParamType::String: return "a string";
    case ParamType::Enum: return "one of: " + join(spec.choices);
    case ParamType::IntList: return "a list of integers";
    case ParamType::IntOrAuto: return "an integer or 'auto'";
    case ParamType::IntOrList: return "an integer or a list of integers";
  }
  return "a value";
}

}  // namespace wafersim::config
