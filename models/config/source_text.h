#pragma once
// Reading and parsing one YAML file safely: size and text checks before yaml-cpp
// sees it, parser errors turned into located one-line ConfigErrors, and the
// checks yaml-cpp does not make (tab indentation, duplicate keys).
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/config/error.h"

namespace wafersim::config {

constexpr size_t kMaxConfigFileBytes = size_t(1) << 20;

// The location of a yaml-cpp mark in `file` (1-based; line 1 when the mark has none).
SourceLocation location_of(const std::string& file, const YAML::Mark& mark);

// Reads a regular file of at most kMaxConfigFileBytes.
std::string read_config_file(const std::string& path);

// Parses checked text; `name` is the file name used in messages. A lone CR is a
// line break (old Mac files), the text must hold one YAML document, and explicit
// tags (`!!str 16`, `!foo`) are refused.
YAML::Node parse_config_text(const std::string& text, const std::string& name);

// Parses the YAML value of an override such as --set a.b=VALUE, with the same
// checks; errors are reported at `where` and name `key`.
YAML::Node parse_override_value(const std::string& text, const SourceLocation& where, const std::string& key);

}  // namespace wafersim::config
