#include "models/config/schema.h"

#include <algorithm>
#include <stdexcept>

namespace wafersim::config {

const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Bool: return "bool";
    case ParamType::String: return "string";
    case ParamType::Enum: return "enum";
    case ParamType::IntList: return "int list";
    case ParamType::IntOrAuto: return "int or auto";
    case ParamType::IntOrList: return "int or int list";
  }
  return "?";
}

Schema::Schema(std::initializer_list<void (*)(Schema&)> declarations) {
  for (void (*declare)(Schema&) : declarations) declare(*this);
}

void Schema::add(ParamSpec spec) {
  if (spec.path.empty() || spec.path.find('.') == std::string::npos)
    throw std::logic_error("parameter path '" + spec.path + "' must be section.name");
  if (find(spec.path) || is_section(spec.path)) throw std::logic_error("parameter '" + spec.path + "' declared twice");
  for (const ParamSpec& other : params_)
    if (spec.path.compare(0, other.path.size() + 1, other.path + ".") == 0)
      throw std::logic_error("parameter '" + spec.path + "' lies under parameter '" + other.path + "'");
  if (spec.type == ParamType::Enum && spec.choices.empty())
    throw std::logic_error("enum parameter '" + spec.path + "' has no choices");
  params_.push_back(std::move(spec));
}

const ParamSpec* Schema::find(const std::string& path) const {
  for (const ParamSpec& spec : params_)
    if (spec.path == path) return &spec;
  return nullptr;
}

bool Schema::is_section(const std::string& path) const {
  const std::string prefix = path + ".";
  return std::any_of(params_.begin(), params_.end(),
                     [&](const ParamSpec& spec) { return spec.path.compare(0, prefix.size(), prefix) == 0; });
}

std::vector<std::string> Schema::child_keys(const std::string& section) const {
  const std::string prefix = section.empty() ? "" : section + ".";
  std::vector<std::string> keys;
  for (const ParamSpec& spec : params_) {
    if (spec.path.compare(0, prefix.size(), prefix) != 0) continue;
    std::string rest = spec.path.substr(prefix.size());
    std::string key = rest.substr(0, rest.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

ParamSpec int_param(std::string path, std::string unit, std::optional<std::string> default_value, double min,
                    double max, std::string description) {
  ParamSpec spec;
  spec.path = std::move(path);
  spec.type = ParamType::Int;
  spec.unit = std::move(unit);
  spec.default_value = std::move(default_value);
  spec.min = min;
  spec.max = max;
  spec.description = std::move(description);
  return spec;
}

ParamSpec float_param(std::string path, std::string unit, std::optional<std::string> default_value, double min,
                      double max, std::string description) {
  ParamSpec spec =
      int_param(std::move(path), std::move(unit), std::move(default_value), min, max, std::move(description));
  spec.type = ParamType::Float;
  return spec;
}

ParamSpec bool_param(std::string path, bool default_value, std::string description) {
  ParamSpec spec;
  spec.path = std::move(path);
  spec.type = ParamType::Bool;
  spec.default_value = default_value ? "true" : "false";
  spec.description = std::move(description);
  return spec;
}

ParamSpec string_param(std::string path, std::optional<std::string> default_value, std::string description) {
  ParamSpec spec;
  spec.path = std::move(path);
  spec.type = ParamType::String;
  spec.default_value = std::move(default_value);
  spec.description = std::move(description);
  return spec;
}

ParamSpec enum_param(std::string path, std::vector<std::string> choices, std::optional<std::string> default_value,
                     std::string description) {
  ParamSpec spec;
  spec.path = std::move(path);
  spec.type = ParamType::Enum;
  spec.choices = std::move(choices);
  spec.default_value = std::move(default_value);
  spec.description = std::move(description);
  return spec;
}

ParamSpec as_type(ParamType type, ParamSpec spec) {
  spec.type = type;
  return spec;
}

}  // namespace wafersim::config
