#pragma once
// A YAML node read as the typed value a parameter declares.
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/config/config.h"

namespace wafersim::config {

// "a mapping", "a list", "a scalar", "nothing": for messages.
const char* node_kind(const YAML::Node& node);

// The node as `spec`'s type, or a ConfigError at `where` (list elements at their
// own position in `file` when `where` has a line). Ranges are checked by Config::set.
Value parse_value(const ParamSpec& spec, const YAML::Node& node, const SourceLocation& where, const std::string& file);

// The declared default of `spec` as a value; std::logic_error when it has none or it is malformed.
Value default_value(const ParamSpec& spec);

}  // namespace wafersim::config
