#pragma once
// Small text helpers shared by the configuration loader and its messages.
#include <optional>
#include <string>
#include <vector>

namespace wafersim::config {

// Replaces control characters by visible escapes ("\n" -> "\\n") so a message stays one line.
std::string one_line(const std::string& text);
// User text for a message: single-quoted, escaped, and shortened when very long.
std::string quoted(const std::string& text);
// Joins with ", ".
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

// Levenshtein distance between two words.
size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word`, when one is close enough to be a plausible typo
// or a shortened name ("hop_latency" -> "hop_latency_cycles"); nullopt otherwise.
std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& candidates);
// "; did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// Shortest decimal text that reads back as exactly `value` ("1.1", "2", "1e-06").
std::string format_number(double value);

// FNV-1a 64-bit hash of `text` as 16 lowercase hex digits.
std::string fnv1a64_hex(const std::string& text);

}  // namespace wafersim::config
