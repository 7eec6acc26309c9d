#pragma once
// A loaded, validated configuration: every declared parameter has a typed value
// and remembers where it came from (file:line:col, a default, or --set).
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "models/config/embedded.h"
#include "models/config/error.h"
#include "models/config/schema.h"

namespace YAML {
class Node;
}

namespace wafersim::config {

using Value = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

struct Entry {
  Value value;
  SourceLocation where;
  bool from_default = false;
  bool from_preset = false;  // from a preset (compiled in, or a file named by the section)
  uint64_t order = 0;        // when it was set: a later setting overrides an earlier one
};

class Config {
 public:
  explicit Config(const Schema& schema) : schema_(&schema) {}

  // Typed reads of a declared path; reading an undeclared path or the wrong type
  // is a programming error (std::logic_error).
  int64_t get_int(const std::string& path) const;   // Int, or IntOrAuto with "auto" as 0
  double get_float(const std::string& path) const;  // Float (an Int value converts)
  bool get_bool(const std::string& path) const;
  const std::string& get_string(const std::string& path) const;  // String or Enum
  const std::vector<int64_t>& get_int_list(const std::string& path) const;
  std::vector<int64_t> get_int_or_list(const std::string& path) const;  // an integer as a list of one
  // True when the value equals the declared default, however it was given: behaviour
  // must depend only on the resolved values, which is what to_yaml() and hash() cover.
  bool is_default(const std::string& path) const;

  const SourceLocation& where(const std::string& path) const;
  // A String value naming a file: relative to the file that wrote it; from --set
  // or stdin, to the working directory, as it is written.
  std::string file_path(const std::string& path) const;
  // Throws ConfigError at the location of `path`'s value, naming the key.
  [[noreturn]] void fail(const std::string& path, const std::string& message) const;
  // A check between several values fails at the one the user gave: one from the
  // experiment file or --set before one from a preset, a preset's before a default,
  // and the one set last among those. The message should name all of `paths`.
  [[noreturn]] void fail_given(const std::vector<std::string>& paths, const std::string& message) const;

  // Stores a value after checking type and range against the schema (throws ConfigError).
  void set(const std::string& path, Value value, const SourceLocation& where, bool from_default = false,
           bool from_preset = false);

  // Name of the preset a section was built from ("wse3"), or "" for none.
  const std::string& preset(const std::string& section) const;
  void set_preset(const std::string& section, const std::string& name) { presets_[section] = name; }
  // Forgets every value of a section and its preset (before the section is replaced whole).
  void clear_section(const std::string& section);

  // Resolved configuration as YAML, sections nested, keys in declaration order.
  std::string to_yaml() const;
  // FNV-1a 64 of to_yaml(), as 16 lowercase hex digits: identifies a resolved config.
  std::string hash() const;

  const Schema& schema() const { return *schema_; }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // Paths whose value a typed read (get_*, is_default) has asked for: a declared
  // parameter that loading a whole experiment never reads is accepted and ignored.
  const std::set<std::string>& read_paths() const { return read_paths_; }

 private:
  const Entry& read_entry(const std::string& path) const;

  const Schema* schema_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> presets_;
  uint64_t settings_ = 0;
  mutable std::set<std::string> read_paths_;
};

struct LoadOptions {
  // "a.b.c=value" overrides applied after loading, in order; value is YAML ("[1, 2]" is a list).
  std::vector<std::string> overrides;
  // Sections that accept a preset name (or `preset:` key): section -> embedded table.
  // A section value that is not a preset name is read as a path to a YAML file.
  std::map<std::string, const std::vector<EmbeddedFile>*> presets;
  // Sections whose files may also be JSON in another project's format: section ->
  // translation of the parsed file (`root`, read from `file`) into a mapping of
  // the section's keys. Used for a file whose name ends in ".json" (a model's
  // Hugging Face config.json); values copied from `root` keep their line and column.
  std::map<std::string, std::function<YAML::Node(const YAML::Node& root, const std::string& file)>> json_readers;
};

// Loads an experiment file: strict, typed, every error a one-line ConfigError
// naming file:line:col and key (unknown keys come with the closest valid key).
Config load_file(const Schema& schema, const std::string& path, const LoadOptions& options);
Config load_string(const Schema& schema, const std::string& yaml_text, const std::string& name,
                   const LoadOptions& options);

// Human-readable list of every parameter (path, type, unit, default, range, description).
std::string describe_params(const Schema& schema, const std::string& prefix = "");

}  // namespace wafersim::config
