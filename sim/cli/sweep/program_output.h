#pragma once
// Runs another program (sbatch, squeue, sacct) and captures what it prints.
#include <string>
#include <vector>

namespace wafersim::cli::sweep {

struct ProgramOutput {
  int exit_code = -1;  // 127 when the program could not be started
  std::string out;     // stdout
  std::string err;     // stderr
};

// The absolute path of the running wafersim binary (what a point's job runs).
std::string wafersim_executable();

// `text` as one word of a POSIX shell command line.
std::string shell_quoted(const std::string& text);

// Runs `words[0]` (looked up on PATH) with the rest as its arguments; no shell.
ProgramOutput run_program(const std::vector<std::string>& words);

}  // namespace wafersim::cli::sweep
