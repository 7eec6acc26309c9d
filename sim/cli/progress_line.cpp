#include "sim/cli/progress_line.h"

#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

namespace wafersim::cli {

ProgressLine::ProgressLine(bool terminal, double log_interval_seconds)
    : terminal_(terminal), log_interval_seconds_(log_interval_seconds) {}

ProgressLine::ProgressLine() : ProgressLine(::isatty(2) == 1, 5.0) {}

void ProgressLine::show(const std::string& text, bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_shown_).count();
  if (shown_ && !force && since < (terminal_ ? 0.1 : log_interval_seconds_)) return;
  last_shown_ = now;
  shown_ = true;
  if (terminal_)
    std::cerr << "\r\033[K" << text << std::flush;
  else
    std::cerr << text << "\n" << std::flush;
}

void ProgressLine::clear() {
  if (terminal_ && shown_) std::cerr << "\r\033[K";
}

void ProgressLine::end() {
  if (terminal_ && shown_) std::cerr << "\n";
}

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  if (seconds < 3600) return fmt::format("{}:{:02} min", int(seconds) / 60, int(seconds) % 60);
  return fmt::format("{}:{:02} h", int(seconds) / 3600, int(seconds) % 3600 / 60);
}

std::string eta_text(double elapsed_seconds, double done, double total) {
  if (done <= 0) return "ETA ?";
  return "ETA " + duration_text(elapsed_seconds / done * (total - done));
}

}  // namespace wafersim::cli
