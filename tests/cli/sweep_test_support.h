#pragma once
// What the sweep tests share: a CSV reader written from RFC 4180 (not from the
// sweep's own writer), sweep folders, and a sweep run in the background.
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_wafersim.h"

namespace wafersim::testing {

inline std::string sweep_data(const std::string& name) { return std::string(WAFERSIM_TEST_DATA) + "/sweeps/" + name; }

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  size_t column(const std::string& name) const {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw std::runtime_error("no column " + name);
  }
  std::vector<std::string> values(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row.at(column(name)));
    return out;
  }
};

inline Csv parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
    } else if (c == '\n') {
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      any = false;
    } else {
      field += c;
    }
  }
  if (any) throw std::runtime_error("CSV does not end with a line break");
  Csv csv;
  if (records.empty()) return csv;
  csv.header = records.front();
  csv.rows.assign(records.begin() + 1, records.end());
  for (const auto& row : csv.rows)
    if (row.size() != csv.header.size()) throw std::runtime_error("CSV row with a different number of fields");
  return csv;
}

inline Csv read_csv(const std::filesystem::path& path) { return parse_csv(read_all(path)); }

// The point records in DIR/points, by file name; a file that does not parse fails the caller's check.
inline std::map<std::string, std::string> point_records(const std::filesystem::path& out) {
  std::map<std::string, std::string> records;
  for (const auto& entry : std::filesystem::directory_iterator(out / "points"))
    if (entry.path().extension() == ".json") records[entry.path().filename().string()] = read_all(entry.path());
  return records;
}

inline bool parses_as_json(const std::string& text) {
  return !nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded();
}

// A wafersim process started in the background, output discarded.
class Background {
 public:
  explicit Background(const std::vector<std::string>& args) {
    std::vector<std::string> words = {WAFERSIM_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  void signal(int number) const { ::kill(pid_, number); }
  // The exit code, or 128 + the signal that ended it.
  int wait() {
    if (!reaped_) {
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  // Whether it has ended (reaped then; wait() gives how).
  bool ended() {
    if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    return reaped_;
  }
  // Waits until `ready` holds or the process ends, however long that takes
  // (a loaded machine is slow, not wrong; ctest's timeout catches a hang);
  // returns whether it held.
  template <typename Condition>
  bool wait_until(Condition ready) {
    while (!ready()) {
      if (ended()) return ready();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Waits until `ready` holds or `gone` does (what would make it never hold),
// with no bound on the time; returns whether `ready` held.
template <typename Condition, typename Gone>
bool wait_until(Condition ready, Gone gone) {
  while (!ready()) {
    if (gone()) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace wafersim::testing
