#pragma once
// The progress line of the long commands (run, sweep) on stderr: redrawn in
// place on a terminal; anywhere else (a log file, a pipe) one plain line at
// most every few seconds, so a log stays short and holds no carriage returns.
#include <chrono>
#include <string>

namespace wafersim::cli {

class ProgressLine {
 public:
  // `terminal`: whether stderr is one (isatty); `log_interval_seconds`: the
  // least time between two lines when it is not.
  ProgressLine(bool terminal, double log_interval_seconds);
  // Stderr as it is, one line every 5 s when it is no terminal.
  ProgressLine();

  // Shows `text` unless a line was shown too recently (0.1 s on a terminal);
  // the first line and a forced one are always shown.
  void show(const std::string& text, bool force = false);
  // Removes the redrawn line, before other output goes to stderr.
  void clear();
  // Ends the redrawn line, if one was shown.
  void end();
  bool terminal() const { return terminal_; }

 private:
  bool terminal_;
  double log_interval_seconds_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_shown_{};
};

// "12.5 s", "3:05 min", "1:02 h".
std::string duration_text(double seconds);
// "ETA 3:05 min" by the rate so far (`done` of `total` after `elapsed_seconds`); "ETA ?" before any is done.
std::string eta_text(double elapsed_seconds, double done, double total);

}  // namespace wafersim::cli
