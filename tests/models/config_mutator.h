#pragma once
// Seeded mutations of good experiment files and of --set strings, for the
// configuration fuzz tests: the same seed gives the same cases on every machine.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace wafersim::testing {

// splitmix64: small, and the same everywhere (std:: distributions are not).
class FuzzRandom {
 public:
  explicit FuzzRandom(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : size_t(next() % n); }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  uint64_t state_;
};

// Cases to run: `fallback`, or WAFERSIM_FUZZ_CASES when set (for longer runs).
inline size_t fuzz_cases(size_t fallback) {
  const char* text = std::getenv("WAFERSIM_FUZZ_CASES");
  if (!text || !*text) return fallback;
  return size_t(std::strtoull(text, nullptr, 10));
}

inline const std::vector<std::string>& fuzz_punctuation() {
  static const std::vector<std::string> items = {":",
                                                 ": ",
                                                 "-",
                                                 "- ",
                                                 "[",
                                                 "]",
                                                 "{",
                                                 "}",
                                                 ",",
                                                 "&a ",
                                                 "*a",
                                                 "<<: *a\n",
                                                 "!",
                                                 "!!str ",
                                                 "!!int ",
                                                 "!foo ",
                                                 "|",
                                                 ">",
                                                 "'",
                                                 "\"",
                                                 "#",
                                                 "? ",
                                                 "%",
                                                 "@",
                                                 "`",
                                                 "\t",
                                                 "\n",
                                                 "\r",
                                                 "\r\n",
                                                 "---\n",
                                                 "...\n",
                                                 "--- ",
                                                 "\\",
                                                 "\xef\xbb\xbf",
                                                 "\xc3\xa9",
                                                 "\xff",
                                                 std::string(1, '\0'),
                                                 "~",
                                                 "null",
                                                 "  ",
                                                 "\n  ",
                                                 ".inf",
                                                 ".nan"};
  return items;
}

inline const std::vector<std::string>& fuzz_values() {
  static const std::vector<std::string> items = {"0",
                                                 "-1",
                                                 "1",
                                                 "16",
                                                 "2.5",
                                                 "1e-3",
                                                 "1e308",
                                                 "1e999",
                                                 "-0",
                                                 "0x10",
                                                 "0o7",
                                                 "+5",
                                                 "99999999999999999999",
                                                 "9223372036854775807",
                                                 "-9223372036854775808",
                                                 "9223372036854775808",
                                                 "9007199254740993",
                                                 "4294967296",
                                                 "4294967295",
                                                 "65536",
                                                 "1048576",
                                                 "true",
                                                 "false",
                                                 "yes",
                                                 "~",
                                                 "null",
                                                 "auto",
                                                 "''",
                                                 "\"16\"",
                                                 "!!str 16",
                                                 "!foo 16",
                                                 "[]",
                                                 "[0, 1]",
                                                 "[1, !!int 2]",
                                                 "{}",
                                                 "{a: 1}",
                                                 "wse3",
                                                 "tiny",
                                                 "tiny-moe",
                                                 "llama3.1-405b",
                                                 "gpt-oss-120b",
                                                 "qwen3-235b-a22b",
                                                 "models/missing.yaml",
                                                 "/dev/null",
                                                 "/",
                                                 ".",
                                                 "---",
                                                 "...",
                                                 "*a",
                                                 "&a 1",
                                                 "\"unterminated",
                                                 "'x",
                                                 "[1, 2",
                                                 "{x: 1",
                                                 ".inf",
                                                 "-.inf",
                                                 ".nan",
                                                 "1_000",
                                                 "0.0",
                                                 "1.",
                                                 ".5",
                                                 "é",
                                                 "a\tb"};
  return items;
}

// One mutation of `text`.
inline std::string mutate_once(std::string text, FuzzRandom& random) {
  auto lines = [&] {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      end = end == std::string::npos ? text.size() : end + 1;
      out.push_back(text.substr(start, end - start));
      start = end;
    }
    return out;
  };
  auto joined = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& part : parts) out += part;
    return out;
  };
  const size_t at = random.below(text.size() + 1);
  switch (random.below(11)) {
    case 0:  // byte flip
      if (!text.empty()) text[random.below(text.size())] ^= char(1 << random.below(8));
      return text;
    case 1:  // random byte
      if (!text.empty()) text[random.below(text.size())] = char(random.below(256));
      return text;
    case 2:  // YAML punctuation
      return text.insert(at, random.pick(fuzz_punctuation()));
    case 3: {  // duplicated line
      std::vector<std::string> parts = lines();
      if (parts.empty()) return text;
      size_t i = random.below(parts.size());
      parts.insert(parts.begin() + long(i), parts[i]);
      return joined(parts);
    }
    case 4: {  // deleted line
      std::vector<std::string> parts = lines();
      if (parts.empty()) return text;
      parts.erase(parts.begin() + long(random.below(parts.size())));
      return joined(parts);
    }
    case 5: {  // a value replaced: the text after a ": " up to the end of its line
      size_t colon = text.find(": ", at);
      if (colon == std::string::npos) colon = text.find(": ");
      if (colon == std::string::npos) return text;
      size_t end = text.find('\n', colon);
      if (end == std::string::npos) end = text.size();
      return text.replace(colon + 2, end - colon - 2, random.pick(fuzz_values()));
    }
    case 6: {  // tab in the indentation or anywhere
      std::vector<std::string> parts = lines();
      if (parts.empty() || random.below(2)) return text.insert(at, "\t");
      parts[random.below(parts.size())].insert(0, "\t");
      return joined(parts);
    }
    case 7: {  // tag before a value
      size_t colon = text.find(": ", at);
      if (colon == std::string::npos) return text;
      return text.insert(colon + 2, random.pick(std::vector<std::string>{"!!str ", "!!int ", "!foo ", "! ", "!!map "}));
    }
    case 8: {  // document marker on a line of its own
      std::vector<std::string> parts = lines();
      const std::string marker = random.pick(std::vector<std::string>{"---\n", "...\n", "--- # x\n", "... \n"});
      parts.insert(parts.begin() + long(random.below(parts.size() + 1)), marker);
      return joined(parts);
    }
    case 9: {  // indentation changed
      std::vector<std::string> parts = lines();
      if (parts.empty()) return text;
      std::string& line = parts[random.below(parts.size())];
      if (random.below(2) && !line.empty() && line[0] == ' ')
        line.erase(0, 1 + random.below(2));
      else
        line.insert(0, std::string(1 + random.below(4), ' '));
      return joined(parts);
    }
    default: {  // line endings: CR only or CRLF
      const std::string ending = random.below(2) ? "\r" : "\r\n";
      std::string out;
      for (char c : text) out += c == '\n' ? ending : std::string(1, c);
      return out;
    }
  }
}

// One to three mutations of `text`.
inline std::string mutate(const std::string& text, FuzzRandom& random) {
  std::string out = text;
  for (size_t n = 1 + random.below(3); n > 0; --n) out = mutate_once(out, random);
  return out;
}

// A --set string: a parameter path (or a section, or a slightly wrong one) and a value.
inline std::string fuzz_override(const std::vector<std::string>& paths, FuzzRandom& random) {
  std::string path = random.below(8) == 0 ? random.pick(std::vector<std::string>{"model", "hardware", "workload", ""})
                                          : random.pick(paths);
  std::string value = random.pick(fuzz_values());
  if (random.below(3) == 0) value = mutate_once(value, random);
  if (random.below(6) == 0) path = mutate_once(path, random);
  const std::string separator = random.below(20) == 0 ? "" : "=";
  return path + separator + value;
}

}  // namespace wafersim::testing
