#include "models/config/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "models/config/parse_value.h"
#include "models/config/text.h"
#include "models/config/value_text.h"

namespace wafersim::config {

namespace {

[[noreturn]] void wrong_read(const std::string& path, const char* wanted) {
  throw std::logic_error("configuration parameter '" + path + "' read as " + wanted);
}

[[noreturn]] void out_of_range(const ParamSpec& spec, const std::string& shown, const SourceLocation& where) {
  std::string unit = spec.unit.empty() ? "" : " " + spec.unit;
  throw ConfigError(where, spec.path,
                    spec.path + " = " + shown + unit + " is out of range; allowed " + range_description(spec));
}

void check_range(const ParamSpec& spec, double number, const SourceLocation& where) {
  if (!(number >= spec.min && number <= spec.max)) out_of_range(spec, format_number(number), where);
}

// Integers compare with the declared bounds exactly: a double cannot tell 2^53 + 1
// from 2^53, so converting the value would let one past a bound through.
void check_range(const ParamSpec& spec, int64_t number, const SourceLocation& where) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  const bool above_min = spec.min <= -kTwoTo63 || (spec.min < kTwoTo63 && number >= int64_t(std::ceil(spec.min)));
  const bool below_max = spec.max >= kTwoTo63 || (spec.max >= -kTwoTo63 && number <= int64_t(std::floor(spec.max)));
  if (!above_min || !below_max) out_of_range(spec, std::to_string(number), where);
}

// Brings `value` to the alternative the spec's type stores, or explains the mismatch.
Value normalised(const ParamSpec& spec, Value value, const SourceLocation& where) {
  auto mismatch = [&] {
    return ConfigError(where, spec.path, spec.path + " expects " + type_phrase(spec) + ", got " + value_text(value));
  };
  switch (spec.type) {
    case ParamType::Int:
      if (!std::holds_alternative<int64_t>(value)) throw mismatch();
      break;
    case ParamType::IntOrAuto:
      if (auto* word = std::get_if<std::string>(&value); word && *word == "auto") break;
      if (!std::holds_alternative<int64_t>(value)) throw mismatch();
      break;
    case ParamType::Float:
      if (auto* integer = std::get_if<int64_t>(&value)) return Value(double(*integer));
      if (!std::holds_alternative<double>(value) || !std::isfinite(std::get<double>(value))) throw mismatch();
      break;
    case ParamType::Bool:
      if (!std::holds_alternative<bool>(value)) throw mismatch();
      break;
    case ParamType::String:
    case ParamType::Enum:
      if (!std::holds_alternative<std::string>(value)) throw mismatch();
      break;
    case ParamType::IntList:
      if (!std::holds_alternative<std::vector<int64_t>>(value)) throw mismatch();
      break;
    case ParamType::IntOrList:
      if (!std::holds_alternative<int64_t>(value) && !std::holds_alternative<std::vector<int64_t>>(value))
        throw mismatch();
      break;
  }
  return value;
}

}  // namespace

namespace {
const Entry& entry_of(const Config& config, const std::string& path) {
  auto found = config.entries().find(path);
  if (found == config.entries().end()) throw std::logic_error("configuration parameter '" + path + "' has no value");
  return found->second;
}
}  // namespace

const Entry& Config::read_entry(const std::string& path) const {
  const Entry& entry = entry_of(*this, path);
  read_paths_.insert(path);
  return entry;
}

int64_t Config::get_int(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* integer = std::get_if<int64_t>(&value)) return *integer;
  if (auto* word = std::get_if<std::string>(&value); word && *word == "auto") return 0;
  wrong_read(path, "int");
}

double Config::get_float(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* number = std::get_if<double>(&value)) return *number;
  if (auto* integer = std::get_if<int64_t>(&value)) return double(*integer);
  wrong_read(path, "float");
}

bool Config::get_bool(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* flag = std::get_if<bool>(&value)) return *flag;
  wrong_read(path, "bool");
}

const std::string& Config::get_string(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* text = std::get_if<std::string>(&value)) return *text;
  wrong_read(path, "string");
}

std::vector<int64_t> Config::get_int_or_list(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* integer = std::get_if<int64_t>(&value)) return {*integer};
  if (auto* list = std::get_if<std::vector<int64_t>>(&value)) return *list;
  wrong_read(path, "int or int list");
}

const std::vector<int64_t>& Config::get_int_list(const std::string& path) const {
  const Value& value = read_entry(path).value;
  if (auto* list = std::get_if<std::vector<int64_t>>(&value)) return *list;
  wrong_read(path, "int list");
}

bool Config::is_default(const std::string& path) const {
  const Entry& entry = read_entry(path);
  if (entry.from_default) return true;
  const ParamSpec* spec = schema_->find(path);
  return spec->default_value && default_value(*spec) == entry.value;
}

const SourceLocation& Config::where(const std::string& path) const { return entry_of(*this, path).where; }

std::string Config::file_path(const std::string& path) const {
  std::filesystem::path file(get_string(path));
  const SourceLocation& written = where(path);
  if (file.is_relative() && written.line > 0 && written.file != "<stdin>")
    file = std::filesystem::path(written.file).parent_path() / file;
  return file.string();
}

void Config::fail(const std::string& path, const std::string& message) const {
  throw ConfigError(where(path), path, path + ": " + message);
}

void Config::fail_given(const std::vector<std::string>& paths, const std::string& message) const {
  // A path this configuration does not hold (a schema of one section) ranks last.
  auto rank = [&](const std::string& path) {
    auto found = entries_.find(path);
    if (found == entries_.end()) return std::make_pair(-1, uint64_t(0));
    const Entry& entry = found->second;
    const int origin = entry.from_default ? 0 : entry.from_preset ? 1 : 2;
    return std::make_pair(origin, entry.order);
  };
  if (paths.empty()) throw std::logic_error("fail_given needs at least one path");
  const std::string* blamed = &paths.front();
  for (const std::string& path : paths)
    if (rank(path) > rank(*blamed)) blamed = &path;
  fail(*blamed, message);
}

void Config::clear_section(const std::string& section) {
  const std::string prefix = section + ".";
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
    it = entries_.erase(it);
  presets_.erase(section);
}

void Config::set(const std::string& path, Value value, const SourceLocation& where, bool from_default,
                 bool from_preset) {
  const ParamSpec* spec = schema_->find(path);
  if (!spec) throw std::logic_error("configuration parameter '" + path + "' is not declared");
  value = normalised(*spec, std::move(value), where);
  if (auto* integer = std::get_if<int64_t>(&value)) check_range(*spec, *integer, where);
  if (auto* number = std::get_if<double>(&value)) check_range(*spec, *number, where);
  if (auto* list = std::get_if<std::vector<int64_t>>(&value))
    for (int64_t element : *list) check_range(*spec, element, where);
  if (spec->type == ParamType::Enum) {
    const std::string& word = std::get<std::string>(value);
    if (std::find(spec->choices.begin(), spec->choices.end(), word) == spec->choices.end())
      throw ConfigError(where, path,
                        "bad value " + quoted(word) + " for " + path + "; choices: " + join(spec->choices) +
                            did_you_mean(word, spec->choices));
  }
  entries_[path] = Entry{std::move(value), where, from_default, from_preset, ++settings_};
}

const std::string& Config::preset(const std::string& section) const {
  static const std::string none;
  auto found = presets_.find(section);
  return found == presets_.end() ? none : found->second;
}

namespace {

void emit_section(const Config& config, const std::string& prefix, int depth, std::string& out) {
  const std::string indent(size_t(depth) * 2, ' ');
  if (depth == 1 && !config.preset(prefix).empty())
    out += indent + "preset: " + yaml_scalar(config.preset(prefix)) + "\n";
  for (const std::string& key : config.schema().child_keys(prefix)) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (config.schema().find(path)) {
      auto found = config.entries().find(path);
      if (found != config.entries().end()) out += indent + key + ": " + value_text(found->second.value) + "\n";
    } else {
      out += indent + key + ":\n";
      emit_section(config, path, depth + 1, out);
    }
  }
}

}  // namespace

std::string Config::to_yaml() const {
  std::string out;
  emit_section(*this, "", 0, out);
  return out;
}

std::string Config::hash() const { return fnv1a64_hex(to_yaml()); }

}  // namespace wafersim::config
