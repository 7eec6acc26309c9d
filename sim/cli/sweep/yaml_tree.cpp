#include "sim/cli/sweep/yaml_tree.h"

#include <filesystem>

#include "models/config/embedded.h"
#include "models/config/source_text.h"
#include "models/config/text.h"
#include "models/config/value_text.h"
#include "sim/experiment/experiment.h"

namespace wafersim::cli::sweep {

namespace {

// A scalar as its source spelled it: quoted text stays quoted, so a quoted
// "5" is still a string when the point file is read back.
std::string scalar_text(const YAML::Node& node) {
  return node.Tag() == "!" ? config::yaml_scalar(node.Scalar()) : node.Scalar();
}

void set_in_place(YAML::Node node, const std::vector<std::string>& parts, size_t index, const YAML::Node& value) {
  if (index + 1 == parts.size()) {
    node[parts[index]] = YAML::Clone(value);
    return;
  }
  YAML::Node child = node[parts[index]];
  if (!child.IsMap()) {
    YAML::Node group(YAML::NodeType::Map);
    // Only a top-level section can be a preset name.
    if (index == 0 && child.IsScalar()) group["preset"] = YAML::Clone(child);
    child = group;  // yaml-cpp assignment rebinds the tree's node, so the tree now holds the group
  }
  set_in_place(child, parts, index + 1, value);
}

void emit_block(const YAML::Node& map, int indent, std::string& out) {
  for (const auto& pair : map) {
    out += std::string(size_t(indent), ' ') + scalar_text(pair.first) + ":";
    const YAML::Node& value = pair.second;
    if (value.IsMap() && value.size() > 0) {
      out += "\n";
      emit_block(value, indent + 2, out);
    } else {
      if (!value.IsNull()) out += " " + flow_text(value);
      out += "\n";
    }
  }
}

const std::vector<EmbeddedFile>* preset_table(const std::string& section) {
  const auto found = preset_sections().find(section);
  return found == preset_sections().end() ? nullptr : found->second;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The loader reads a preset name as a file when it is not a preset: the same test here.
std::string absolute_preset_name(const std::string& name, const std::vector<EmbeddedFile>& table,
                                 const std::string& folder) {
  if (name.empty() || name[0] == '/' || find_embedded(table, name)) return name;
  const std::filesystem::path path = std::filesystem::path(folder.empty() ? "." : folder) / name;
  const bool looks_like_file =
      name.find('/') != std::string::npos || ends_with(name, ".yaml") || ends_with(name, ".yml");
  std::error_code ignored;
  if (!looks_like_file && !std::filesystem::exists(path, ignored)) return name;  // the loader names the unknown preset
  return std::filesystem::absolute(path).lexically_normal().string();
}

// Note: assigning to a YAML::Node rebinds the node it refers to inside its tree,
// so walks below recurse instead of reassigning a cursor.
void locate_in(const YAML::Node& node, const std::vector<std::string>& parts, size_t index, const std::string& file,
               bool at_key, config::SourceLocation& best) {
  if (index == parts.size() || !node.IsMap()) return;  // a preset name stands for everything below it
  for (const auto& pair : node) {
    if (!pair.first.IsScalar() || pair.first.Scalar() != parts[index]) continue;
    if (!pair.first.Mark().is_null()) best = config::location_of(file, pair.first.Mark());
    const bool last = index + 1 == parts.size();
    if (!(last && at_key) && !pair.second.IsNull() && !pair.second.Mark().is_null())
      best = config::location_of(file, pair.second.Mark());
    locate_in(pair.second, parts, index + 1, file, at_key, best);
    return;
  }
}

void make_absolute(YAML::Node name, const std::vector<EmbeddedFile>& table, const std::string& folder) {
  if (!name.IsScalar() || name.Tag() == "!") return;
  const std::string resolved = absolute_preset_name(name.Scalar(), table, folder);
  if (resolved != name.Scalar()) name = resolved;  // rebinds the tree's node to the new text
}

// Keys below a section whose value names a file relative to the file that
// sets it, as the loader reads them (workloads/speculative_spec.cpp,
// workloads/serving/serving_spec.cpp), with the names that are not files.
struct FileKey {
  const char* path;
  const std::vector<EmbeddedFile>& (*names)();
};
const std::vector<EmbeddedFile>& no_names() {
  static const std::vector<EmbeddedFile> none;
  return none;
}
const FileKey kFileKeys[] = {{"workload.speculative.draft_model", embedded_model_zoo},
                             {"serving.trace_file", no_names}};

void make_file_absolute(YAML::Node node, const std::vector<std::string>& parts, size_t index,
                        const std::vector<EmbeddedFile>& names, const std::string& folder) {
  if (index == parts.size()) return make_absolute(node, names, folder);
  if (!node.IsMap()) return;
  for (auto pair : node)
    if (pair.first.IsScalar() && pair.first.Scalar() == parts[index]) {
      make_file_absolute(pair.second, parts, index + 1, names, folder);
      return;
    }
}

}  // namespace

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

void set_value(YAML::Node root, const std::string& path, const YAML::Node& value) {
  set_in_place(root, split_path(path), 0, value);
}

std::string emit_yaml(const YAML::Node& node) {
  if (!node.IsMap()) return flow_text(node) + "\n";
  std::string out;
  emit_block(node, 0, out);
  return out;
}

std::string flow_text(const YAML::Node& node) {
  if (node.IsScalar()) return scalar_text(node);
  if (node.IsSequence()) {
    std::vector<std::string> items;
    for (const YAML::Node& item : node) items.push_back(flow_text(item));
    return "[" + config::join(items) + "]";
  }
  if (node.IsMap()) {
    std::vector<std::string> items;
    for (const auto& pair : node) items.push_back(scalar_text(pair.first) + ": " + flow_text(pair.second));
    return "{" + config::join(items) + "}";
  }
  return "null";
}

config::SourceLocation locate(const YAML::Node& root, const std::string& path, const std::string& file,
                              const config::SourceLocation& fallback, bool at_key) {
  config::SourceLocation best = fallback;
  locate_in(root, split_path(path), 0, file, at_key, best);
  return best;
}

YAML::Node with_absolute_section_files(const YAML::Node& experiment, const std::string& folder) {
  if (!experiment.IsMap()) return experiment;
  YAML::Node copy(YAML::NodeType::Map);
  for (const auto& section : experiment) {
    const bool named = section.first.IsScalar();
    copy[YAML::Clone(section.first)] = named
                                           ? with_absolute_section_file(section.first.Scalar(), section.second, folder)
                                           : YAML::Clone(section.second);
  }
  return copy;
}

YAML::Node with_absolute_section_file(const std::string& section, const YAML::Node& value, const std::string& folder) {
  YAML::Node copy = YAML::Clone(value);
  // `section` is a section or, for a point's override, a whole path.
  for (const FileKey& file_key : kFileKeys) {
    const std::string key = file_key.path;
    if (key == section) make_file_absolute(copy, {}, 0, file_key.names(), folder);
    if (key.compare(0, section.size() + 1, section + ".") == 0)
      make_file_absolute(copy, split_path(key.substr(section.size() + 1)), 0, file_key.names(), folder);
  }
  const std::vector<EmbeddedFile>* table = preset_table(section);
  if (!table) return copy;
  if (copy.IsScalar()) make_absolute(copy, *table, folder);
  if (copy.IsMap())
    for (auto key : copy)
      if (key.first.IsScalar() && key.first.Scalar() == "preset") make_absolute(key.second, *table, folder);
  return copy;
}

}  // namespace wafersim::cli::sweep
