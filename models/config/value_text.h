#pragma once
// How configuration values are written: in YAML output and in messages.
#include <string>

#include "models/config/config.h"

namespace wafersim::config {

// A string as a YAML scalar: plain when that reads back as the same string, else double-quoted.
std::string yaml_scalar(const std::string& text);
// A value as YAML text ("16", "1.1", "true", "[0, 2]", "auto", "\"a b\"").
std::string value_text(const Value& value);
// "an integer", "a number", "true or false", "one of: a, b", ... for messages.
std::string type_phrase(const ParamSpec& spec);
// Allowed values: "[1, 32] colors", ">= 0 bytes", "one of: a, b"; "" when anything goes.
std::string range_description(const ParamSpec& spec);

}  // namespace wafersim::config
