#include "models/config/error.h"

#include "models/config/text.h"

namespace wafersim::config {

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  if (column <= 0) return file + ":" + std::to_string(line);
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string located(const SourceLocation& where, const std::string& what) {
  std::string place = where.str();
  // Messages are printed on one line: user text may carry control characters.
  return one_line(place.empty() ? what : place + ": " + what);
}
}  // namespace

ConfigError::ConfigError(const SourceLocation& where, const std::string& key, const std::string& what)
    : std::runtime_error(located(where, what)), where_(where), key_(key) {}

}  // namespace wafersim::config
