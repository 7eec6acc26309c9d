#include "sim/reports/output.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/reports/command_error.h"

namespace wafersim::reports {

namespace {

[[noreturn]] void cannot_write(const std::string& path, int error) {
  throw CommandError(kExitBadInput, "cannot write " + path + ": " + std::strerror(error));
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    done += size_t(written);
  }
  return true;
}

// Columns a cell takes on a terminal: its UTF-8 characters, not its bytes ("—" is one).
size_t display_width(const std::string& text) {
  return size_t(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

void write_text_atomically(const std::string& path_given, const std::string& text) {
  if (path_given.empty()) throw CommandError(kExitBadInput, "cannot write to an empty file name");
  // Only a regular file is replaced: a symbolic link keeps pointing where it
  // did (its target is replaced), and a device or FIFO (/dev/null, a pipe) is
  // written through, never replaced by a file.
  std::string path = path_given;
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) cannot_write(path, EISDIR);
    if (!S_ISREG(status.st_mode)) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) cannot_write(path, errno);
      const bool ok = write_all(fd, text);
      const int error = errno;
      ::close(fd);
      if (!ok) cannot_write(path, error);
      return;
    }
    char* target = ::realpath(path.c_str(), nullptr);
    if (!target) cannot_write(path, errno);
    path = target;
    std::free(target);
  } else if (::lstat(path.c_str(), &status) == 0 && S_ISLNK(status.st_mode)) {
    throw CommandError(kExitBadInput, "cannot write " + path + ": it is a symbolic link to nothing");
  }
  // The temporary sits next to the target so the rename stays on one file system.
  std::string temporary = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) cannot_write(path, errno);
  bool ok = write_all(fd, text) && ::fchmod(fd, 0644) == 0;
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && ::rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(temporary.c_str());
    cannot_write(path, error);
  }
}

namespace {

// Creates and removes a temporary file named after `stem`: what a write next to it will need.
void probe(const std::string& stem, const std::string& named) {
  std::string temporary = stem + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) cannot_write(named, errno);
  ::close(fd);
  ::unlink(temporary.c_str());
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) throw CommandError(kExitBadInput, "cannot write to an empty file name");
  if (path == "-") return;
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) cannot_write(path, EISDIR);
    if (!S_ISREG(status.st_mode)) return;  // a device or FIFO is written through, and opening it may block
    char* target = ::realpath(path.c_str(), nullptr);
    if (!target) cannot_write(path, errno);
    const std::string resolved = target;
    std::free(target);
    probe(resolved, path);
    return;
  }
  if (::lstat(path.c_str(), &status) == 0 && S_ISLNK(status.st_mode))
    throw CommandError(kExitBadInput, "cannot write " + path + ": it is a symbolic link to nothing");
  probe(path, path);
}

void check_writable_folder(const std::string& folder) {
  if (folder.empty()) throw CommandError(kExitBadInput, "cannot write to an empty folder name");
  struct stat status {};
  if (::stat(folder.c_str(), &status) == 0) {
    if (!S_ISDIR(status.st_mode)) cannot_write(folder, ENOTDIR);
    probe(folder + "/.wafersim", folder);
    return;
  }
  const std::string parent = parent_of(folder);
  if (::stat(parent.c_str(), &status) != 0) cannot_write(folder, errno);
  if (!S_ISDIR(status.st_mode)) cannot_write(folder, ENOTDIR);
  probe(folder, folder);
}

void make_folder(const std::string& folder) {
  if (::mkdir(folder.c_str(), 0755) == 0) return;
  const int error = errno;
  struct stat status {};
  if (error == EEXIST && ::stat(folder.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) return;
  cannot_write(folder, error == EEXIST ? ENOTDIR : error);
}

void append_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  const bool ok = write_all(fd, text);
  const int error = errno;
  ::close(fd);
  if (!ok) cannot_write(path, error);
}

void write_json(const std::string& path, const nlohmann::json& document) {
  const std::string text = document.dump(2) + "\n";
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  write_text_atomically(path, text);
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() > columns_.size()) throw std::logic_error("table row has more cells than columns");
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::str() const {
  std::vector<std::string> headers;
  for (const Column& column : columns_)
    headers.push_back(column.unit.empty() ? column.title : column.title + " (" + column.unit + ")");
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = display_width(headers[c]);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string padding(widths[c] - display_width(cells[c]), ' ');
      out += (c ? "  " : "") + (columns_[c].align_right ? padding + cells[c] : cells[c] + padding);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace wafersim::reports
