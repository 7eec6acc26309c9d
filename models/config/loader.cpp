// Experiment files: sections, presets, nested keys, --set overrides and defaults.
#include <algorithm>

#include <sys/stat.h>

#include "models/config/config.h"
#include "models/config/parse_value.h"
#include "models/config/source_text.h"
#include "models/config/text.h"
#include "models/config/value_text.h"

namespace wafersim::config {

namespace {

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool looks_like_path(const std::string& name) {
  return name.find('/') != std::string::npos || ends_with(name, ".yaml") || ends_with(name, ".yml") ||
         ends_with(name, ".json");
}

bool file_exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

class Loader {
 public:
  Loader(const Schema& schema, const LoadOptions& options, std::string name)
      : schema_(schema), options_(options), name_(std::move(name)), config_(schema) {}

  Config load(const std::string& text) {
    const YAML::Node root = parse_config_text(text, name_);
    const std::string sections = join(schema_.child_keys(""));
    if (root.IsNull())
      throw ConfigError(SourceLocation{name_, 1, 0}, "",
                        "empty file; expected a mapping of sections (" + sections + ")");
    if (!root.IsMap())
      throw ConfigError(
          location_of(name_, root.Mark()), "",
          std::string("top level must be a mapping of sections (") + sections + "), got " + node_kind(root));
    for (const auto& pair : root) load_section(pair.first, pair.second);
    for (const std::string& text_override : options_.overrides) apply_override(text_override);
    fill_defaults();
    return std::move(config_);
  }

 private:
  std::string key_name(const YAML::Node& key, const std::string& file, const std::string& within) {
    if (!key.IsScalar())
      throw ConfigError(
          location_of(file, key.Mark()), within,
          std::string("keys must be plain names, got ") + node_kind(key) + (within.empty() ? "" : " in " + within));
    return key.Scalar();
  }

  void load_section(const YAML::Node& key_node, const YAML::Node& value) {
    const std::string section = key_name(key_node, name_, "");
    const SourceLocation where = location_of(name_, key_node.Mark());
    if (section.find('.') != std::string::npos || !schema_.is_section(section))
      throw ConfigError(where, section,
                        "unknown section " + quoted(section) + did_you_mean(section, schema_.child_keys("")));
    section_where_[section] = where;
    auto presets = options_.presets.find(section);
    if (presets != options_.presets.end() && value.IsScalar()) {
      apply_preset(section, *presets->second, value, name_, folder_of(name_));
      return;
    }
    if (value.IsNull()) return;
    if (!value.IsMap())
      throw ConfigError(
          location_of(name_, value.Mark()), section,
          "section '" + section + "' expects " +
              (presets != options_.presets.end() ? "a preset name, a path or a mapping" : "a mapping of keys") +
              ", got " + node_kind(value));
    if (presets == options_.presets.end())
      apply_mapping(section, value, name_, /*skip_preset=*/false, /*from_preset=*/false);
    else
      apply_section_mapping(section, *presets->second, value, name_, folder_of(name_));
  }

  // A section given as a mapping: its `preset` (if any) first, then its keys over it.
  void apply_section_mapping(const std::string& section, const std::vector<EmbeddedFile>& table,
                             const YAML::Node& mapping, const std::string& file, const std::string& folder) {
    if (mapping["preset"]) apply_preset(section, table, mapping["preset"], file, folder);
    apply_mapping(section, mapping, file, /*skip_preset=*/true, /*from_preset=*/false);
  }

  // `value` names a preset or a file; a file is found relative to `folder` (the
  // folder of the file naming it, or the working directory for --set).
  void apply_preset(const std::string& section, const std::vector<EmbeddedFile>& table, const YAML::Node& value,
                    const std::string& file, const std::string& folder) {
    // A --set value has no position: it is reported at the override itself.
    const SourceLocation where = value.Mark().line < 0 ? SourceLocation{file, 0, 0} : location_of(file, value.Mark());
    if (!value.IsScalar())
      throw ConfigError(where, section + ".preset",
                        section + ".preset expects a preset name or a path, got " + node_kind(value));
    const std::string& name = value.Scalar();
    if (const EmbeddedFile* embedded = find_embedded(table, name)) {
      apply_preset_text(section, embedded->text, embedded->path);
      config_.set_preset(section, name);
      return;
    }
    std::string path = (name.empty() || name[0] == '/') ? name : folder + name;
    if (!looks_like_path(name) && !file_exists(path)) {
      std::vector<std::string> known;
      for (const EmbeddedFile& preset : table) known.push_back(preset.name);
      throw ConfigError(where, section,
                        "unknown " + section + " preset " + quoted(name) + " (known: " + join(known) + ")" +
                            did_you_mean(name, known));
    }
    std::string text;
    try {
      text = read_config_file(path);
    } catch (const ConfigError& e) {
      // Report at the reference, naming the file that could not be read.
      std::string reason = e.what();
      throw ConfigError(where, section, section + " preset file " + reason);
    }
    const auto json_reader = options_.json_readers.find(section);
    if (json_reader != options_.json_readers.end() && ends_with(path, ".json")) {
      const YAML::Node keys = json_reader->second(parse_config_text(text, path), path);
      apply_mapping(section, keys, path, /*skip_preset=*/false, /*from_preset=*/true);
      return;
    }
    apply_preset_text(section, text, path);
  }

  void apply_preset_text(const std::string& section, const std::string& text, const std::string& file) {
    const YAML::Node root = parse_config_text(text, file);
    if (root.IsNull()) return;
    if (!root.IsMap())
      throw ConfigError(location_of(file, root.Mark()), section,
                        "a " + section + " preset holds a mapping of " + section + " keys, got " + node_kind(root));
    apply_mapping(section, root, file, /*skip_preset=*/false, /*from_preset=*/true);
  }

  void apply_mapping(const std::string& prefix, const YAML::Node& mapping, const std::string& file, bool skip_preset,
                     bool from_preset) {
    for (const auto& pair : mapping) {
      const std::string key = key_name(pair.first, file, prefix);
      if (skip_preset && key == "preset") continue;
      const std::string path = prefix + "." + key;
      const YAML::Node& value = pair.second;
      const SourceLocation key_where = location_of(file, pair.first.Mark());
      if (const ParamSpec* spec = schema_.find(path)) {
        const SourceLocation where = value.IsNull() ? key_where : location_of(file, value.Mark());
        config_.set(path, parse_value(*spec, value, where, file), where, /*from_default=*/false, from_preset);
      } else if (schema_.is_section(path)) {
        if (value.IsNull()) continue;
        if (!value.IsMap())
          throw ConfigError(location_of(file, value.Mark()), path,
                            path + " is a group of keys (" + join(schema_.child_keys(path)) +
                                ") and expects a mapping, got " +
                                (value.IsScalar() ? quoted(value.Scalar()) : node_kind(value)));
        apply_mapping(path, value, file, false, from_preset);
      } else {
        throw ConfigError(
            key_where, path,
            "unknown key " + quoted(key) + " in " + prefix + did_you_mean(key, schema_.child_keys(prefix)));
      }
    }
  }

  void apply_override(const std::string& text) {
    const SourceLocation where{"--set " + text, 0, 0};
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
      throw ConfigError(where, "", "malformed override; expected --set a.b.c=value");
    const std::string path = text.substr(0, equals);
    const std::string written = text.substr(equals + 1);
    const auto presets = options_.presets.find(path);
    if (presets != options_.presets.end()) {
      // --set model=NAME replaces the whole section with a preset or a file, as `model: NAME` would;
      // --set 'hardware={preset: tiny, wafers: 2}' with that mapping, as the same mapping in a file would.
      config_.clear_section(path);
      // Paths on the command line are the user's: relative to the working directory.
      if (written.rfind('{', 0) == 0) {
        // YAML reads text starting with '{' as a mapping, or not at all.
        apply_section_mapping(path, *presets->second, parse_override_value(written, where, path), where.file, "");
      } else {
        apply_preset(path, *presets->second, YAML::Node(written), where.file, "");
      }
      return;
    }
    const ParamSpec* spec = schema_.find(path);
    if (!spec) {
      if (schema_.is_section(path))
        throw ConfigError(where, path,
                          quoted(path) + " is a section; --set needs a parameter such as " + path + "." +
                              schema_.child_keys(path).front());
      std::vector<std::string> all;
      for (const ParamSpec& param : schema_.params()) all.push_back(param.path);
      throw ConfigError(where, path, "unknown parameter " + quoted(path) + did_you_mean(path, all));
    }
    const YAML::Node value = parse_override_value(written, where, path);
    config_.set(path, parse_value(*spec, value, where, where.file), where);
  }

  void fill_defaults() {
    const SourceLocation from_default{"default", 0, 0};
    for (const ParamSpec& spec : schema_.params()) {
      if (config_.entries().count(spec.path)) continue;
      if (spec.default_value) {
        try {
          config_.set(spec.path, default_value(spec), from_default, true);
        } catch (const ConfigError& e) {
          throw std::logic_error(std::string("declared default out of range: ") + e.what());
        }
        continue;
      }
      const std::string section = spec.path.substr(0, spec.path.find('.'));
      auto present = section_where_.find(section);
      if (present == section_where_.end())
        throw ConfigError(SourceLocation{name_, 1, 0}, spec.path,
                          "missing required value " + spec.path + ": the experiment has no '" + section + "' section");
      throw ConfigError(
          present->second, spec.path,
          "missing required value " + spec.path + " (no default) in section '" + section + "' starting here");
    }
  }

  const Schema& schema_;
  const LoadOptions& options_;
  std::string name_;
  Config config_;
  std::map<std::string, SourceLocation> section_where_;
};

}  // namespace

Config load_file(const Schema& schema, const std::string& path, const LoadOptions& options) {
  const std::string text = read_config_file(path);
  return Loader(schema, options, path).load(text);
}

Config load_string(const Schema& schema, const std::string& yaml_text, const std::string& name,
                   const LoadOptions& options) {
  return Loader(schema, options, name).load(yaml_text);
}

}  // namespace wafersim::config
