#pragma once
// Editing and writing an experiment's YAML tree: a sweep point is its base
// experiment with some keys replaced, written out as a file of its own.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "models/config/error.h"

namespace wafersim::cli::sweep {

// "hardware.fabric.hop_latency_cycles" -> {"hardware", "fabric", "hop_latency_cycles"}.
std::vector<std::string> split_path(const std::string& path);

// Replaces the value at `path` in the mapping `root` by a copy of `value`
// (missing groups are created). A section given by preset name ("hardware: tiny")
// becomes {preset: tiny, ...} when a key inside it is set, so presets and keys mix.
// Note: yaml-cpp nodes are references; `root` is edited in place.
void set_value(YAML::Node root, const std::string& path, const YAML::Node& value);

// Block-style YAML text that reads back as the same tree: mappings nested,
// lists of scalars in flow style, scalars written as the source spelled them
// (a quoted "5" stays a string).
std::string emit_yaml(const YAML::Node& node);
// One value on one line: a scalar as written, a list or mapping in flow style.
std::string flow_text(const YAML::Node& node);

// The position in `file` of the value at `path` in `root` (of its key when
// `at_key`), or of the deepest key on the way to it; `fallback` when the tree
// holds none of it.
config::SourceLocation locate(const YAML::Node& root, const std::string& path, const std::string& file,
                              const config::SourceLocation& fallback, bool at_key);

// Preset sections, a speculative draft model and a serving trace may name a
// file relative to the file that mentions them; a point file lives elsewhere,
// so such names become absolute paths: in every section of an experiment, or
// in the value of one section or override path.
YAML::Node with_absolute_section_files(const YAML::Node& experiment, const std::string& folder);
YAML::Node with_absolute_section_file(const std::string& section, const YAML::Node& value, const std::string& folder);

}  // namespace wafersim::cli::sweep
