#include "models/config/source_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include <sys/stat.h>
#include <yaml-cpp/depthguard.h>

#include "models/config/text.h"

namespace wafersim::config {

SourceLocation location_of(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return SourceLocation{file, 1, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

std::string read_config_file(const std::string& path) {
  const SourceLocation where{path, 0, 0};
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw ConfigError(where, "", std::string("cannot read: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw ConfigError(where, "", "cannot read: is a directory");
  if (!S_ISREG(info.st_mode)) throw ConfigError(where, "", "cannot read: not a regular file");
  if (size_t(info.st_size) > kMaxConfigFileBytes)
    throw ConfigError(where, "", "larger than 1 MiB; not an experiment file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(where, "", std::string("cannot read: ") + std::strerror(errno));
  // Read at most one byte past the limit: the file may have grown since stat.
  std::string text(kMaxConfigFileBytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) throw ConfigError(where, "", "cannot read: input/output error");
  text.resize(size_t(in.gcount()));
  if (text.size() > kMaxConfigFileBytes) throw ConfigError(where, "", "larger than 1 MiB; not an experiment file");
  return text;
}

namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 when it is invalid.
size_t utf8_sequence_length(const std::string& text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t code;
  if (lead >= 0xc2 && lead <= 0xdf)
    length = 2, code = lead & 0x1f;
  else if (lead >= 0xe0 && lead <= 0xef)
    length = 3, code = lead & 0x0f;
  else if (lead >= 0xf0 && lead <= 0xf4)
    length = 4, code = lead & 0x07;
  else
    return 0;
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  bool surrogate = code >= 0xd800 && code <= 0xdfff;
  if (overlong || surrogate || code > 0x10ffff) return 0;
  return length;
}

void check_is_text(const std::string& text, const std::string& name) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool control = c < 0x20 && c != '\n' && c != '\r' && c != '\t';
    size_t length = utf8_sequence_length(text, i);
    if (control || c == 0x7f || length == 0) throw ConfigError(SourceLocation{name, 1, 0}, "", "not a text file");
    i += length;
  }
}

// yaml-cpp accepts some tab indentation silently, which YAML forbids and which
// makes the nesting the reader sees differ from the one the parser sees.
void check_no_tab_indentation(const std::string& text, const std::string& name) {
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t i = start;
    while (i < end && (text[i] == ' ' || text[i] == '\t')) ++i;
    bool content = i < end && text[i] != '#' && text[i] != '\r';
    size_t tab = text.find('\t', start);
    if (content && tab < i)
      throw ConfigError(SourceLocation{name, line, int(tab - start) + 1}, "",
                        "tab character in indentation; YAML indents with spaces");
    start = end + 1;
    ++line;
  }
}

// yaml-cpp counts only LF as a line break: a file with CR-only line endings
// would read as a single comment line. CRLF and a lone CR both become LF.
std::string with_lf_line_breaks(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r')
      out += text[i];
    else if (i + 1 >= text.size() || text[i + 1] != '\n')
      out += '\n';
  }
  return out;
}

// "---" or "..." at the start of a line, alone or followed by a space.
bool is_document_marker(const std::string& line, const char* marker) {
  return line.compare(0, 3, marker) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
}

bool is_blank_or_comment(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t");
  return first == std::string::npos || line[first] == '#';
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// yaml-cpp reads the first document of a stream and drops the rest silently.
void check_one_document(const std::string& text, const std::string& name) {
  bool content = false;  // a line of the document seen
  int end_line = 0;      // the line of a "..." ending the document
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const SourceLocation here{name, int(i) + 1, 1};
    if (end_line > 0) {
      if (is_blank_or_comment(line)) continue;
      throw ConfigError(here, "",
                        "text after the end of the YAML document ('...' at line " + std::to_string(end_line) +
                            "); an experiment file holds one document");
    }
    if (is_document_marker(line, "---")) {
      if (content) throw ConfigError(here, "", "a second YAML document ('---'); an experiment file holds one document");
      content = !is_blank_or_comment(line.substr(3));
    } else if (is_document_marker(line, "...")) {
      end_line = int(i) + 1;
    } else if (!is_blank_or_comment(line) && line[0] != '%') {
      content = true;
    }
  }
}

// Tags are not part of the format: `!!str 16` would read as the number 16.
void check_no_tag(const YAML::Node& node, const SourceLocation& where, const std::string& key) {
  const std::string& tag = node.Tag();
  // "?" and "" are untagged nodes, "!" a quoted scalar (a string).
  if (tag.empty() || tag == "?" || tag == "!") return;
  const std::string core = "tag:yaml.org,2002:";
  const std::string written = tag.compare(0, core.size(), core) == 0 ? "!!" + tag.substr(core.size()) : tag;
  throw ConfigError(where, key, "explicit YAML tag " + quoted(written) + " is not supported; write the value plain");
}

constexpr size_t kMaxNodesWalked = 1000000;

// yaml-cpp keeps both entries of a repeated key and lookups see only the first,
// so a repeated key would silently lose a value.
void check_no_duplicate_keys(const YAML::Node& node, const std::string& name, const std::string& where,
                             size_t& budget) {
  // Aliases make a small file a large tree; stop before walking it all.
  if (++budget > kMaxNodesWalked)
    throw ConfigError(SourceLocation{name, 1, 0}, "", "too many YAML nodes (aliases expanding?)");
  check_no_tag(node, location_of(name, node.Mark()), where);
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      check_no_duplicate_keys(node[i], name, where + "[" + std::to_string(i) + "]", budget);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> first_line;
  for (const auto& pair : node) {
    const YAML::Node& key = pair.first;
    check_no_tag(key, location_of(name, key.Mark()), where);
    if (key.IsScalar()) {
      SourceLocation here = location_of(name, key.Mark());
      auto [previous, inserted] = first_line.emplace(key.Scalar(), here.line);
      if (!inserted)
        throw ConfigError(here, key.Scalar(),
                          "duplicate key " + quoted(key.Scalar()) + (where.empty() ? " at top level" : " in " + where) +
                              " (first given at line " + std::to_string(previous->second) + ")");
    }
    std::string child = key.IsScalar() ? key.Scalar() : "?";
    check_no_duplicate_keys(pair.second, name, where.empty() ? child : where + "." + child, budget);
  }
}

YAML::Node load_yaml(const std::string& text, const std::string& name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw ConfigError(location_of(name, e.mark), "", "malformed YAML: nested too deeply");
  } catch (const YAML::Exception& e) {
    throw ConfigError(location_of(name, e.mark), "", "malformed YAML: " + e.msg);
  }
}

}  // namespace

YAML::Node parse_config_text(const std::string& file_text, const std::string& name) {
  if (file_text.size() > kMaxConfigFileBytes)
    throw ConfigError(SourceLocation{name, 0, 0}, "", "larger than 1 MiB; not an experiment file");
  check_is_text(file_text, name);
  const std::string text = with_lf_line_breaks(file_text);
  check_no_tab_indentation(text, name);
  check_one_document(text, name);
  YAML::Node root = load_yaml(text, name);
  // yaml-cpp 0.7 accepts a quoted string left open when the file ends with a
  // line break, swallowing the rest of the file; without the break it reports it.
  const size_t end = text.find_last_not_of(" \r\n");
  if (end != std::string::npos && end + 1 < text.size()) load_yaml(text.substr(0, end + 1), name);
  size_t budget = 0;
  check_no_duplicate_keys(root, name, "", budget);
  return root;
}

YAML::Node parse_override_value(const std::string& text, const SourceLocation& where, const std::string& key) {
  for (const std::string& line : lines_of(with_lf_line_breaks(text)))
    if (is_document_marker(line, "---") || is_document_marker(line, "..."))
      throw ConfigError(where, key, "the value holds a YAML document marker ('---' or '...'); --set takes one value");
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(where, key, "cannot read the value of " + key + ": " + e.msg);
  }
  check_no_tag(value, where, key);
  if (value.IsSequence())
    for (size_t i = 0; i < value.size(); ++i) check_no_tag(value[i], where, key);
  return value;
}

}  // namespace wafersim::config
