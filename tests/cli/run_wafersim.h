#pragma once
// Runs the built wafersim binary as a user would and captures what it prints.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace wafersim::testing {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A scratch folder under the system temporary directory, removed with the object.
class Scratch {
 public:
  Scratch() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("wafersim-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::filesystem::path path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

// Runs a shell command line, capturing its output and exit code.
inline Outcome run_shell(std::string command) {
  Scratch scratch;
  command = "{ " + command + "; }";
  command +=
      " >" + shell_quoted((scratch.path() / "out").string()) + " 2>" + shell_quoted((scratch.path() / "err").string());
  const int status = std::system(command.c_str());
  Outcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  outcome.out = read_all(scratch.path() / "out");
  outcome.err = read_all(scratch.path() / "err");
  return outcome;
}

inline Outcome run_wafersim(const std::vector<std::string>& args) {
  std::string command = shell_quoted(WAFERSIM_BINARY);
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  return run_shell(command);
}

// True when `text` is exactly one line ending in a line break.
inline bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

}  // namespace wafersim::testing
