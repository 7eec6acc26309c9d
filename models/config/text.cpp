#include "models/config/text.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace wafersim::config {

std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    } else
      out += char(c);
  }
  return out;
}

std::string quoted(const std::string& text) {
  constexpr size_t kLongest = 60;
  std::string shown = text.size() > kLongest ? text.substr(0, kLongest) + "..." : text;
  return "'" + one_line(shown) + "'";
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    // A typo changes a few letters; a shortened name ("hop_latency" for
    // "hop_latency_cycles") is contained in the real one.
    bool typo = distance <= std::max<size_t>(2, std::max(word.size(), candidate.size()) / 3);
    bool contained = std::min(word.size(), candidate.size()) >= 3 &&
                     (candidate.find(word) != std::string::npos || word.find(candidate) != std::string::npos);
    if (!typo && !contained) continue;
    // A name the user started typing ranks before any typo.
    if (candidate.compare(0, word.size(), word) == 0) distance = 0;
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> match = closest(word, candidates);
  return match ? "; did you mean '" + *match + "'?" : "";
}

std::string format_number(double value) {
  char buffer[40];
  // Whole numbers print in full ("1000000", not "1e+06"): they are often ranges and sizes.
  if (value == std::floor(value) && std::fabs(value) < 1e16) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string fnv1a64_hex(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016" PRIx64, hash);
  return buffer;
}

}  // namespace wafersim::config
