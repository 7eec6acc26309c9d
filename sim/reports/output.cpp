#include "sim/reports/output.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
    if (written == 0) errno = EIO;  // a write that makes no progress sets no errno of its own
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

// Why an existing entry at an output path is not written: only a regular file
// is replaced, and only a character device (/dev/null, a terminal) is written
// through. A symbolic link is never followed (a planted one would send the
// results outside the output folder), and a FIFO would block until a reader comes.
[[noreturn]] void refuse(const std::string& path, mode_t mode) {
  if (S_ISDIR(mode)) cannot_write(path, EISDIR);
  const char* kind = S_ISLNK(mode)    ? "it is a symbolic link"
                     : S_ISFIFO(mode) ? "it is a FIFO"
                     : S_ISSOCK(mode) ? "it is a socket"
                     : S_ISBLK(mode)  ? "it is a block device"
                                      : "it changed while being written";
  throw CommandError(kExitBadInput, "cannot write " + path + ": " + kind + ", not a regular file");
}

// A new empty file "<stem>.tmp-N" next to `stem`, created with mode 0666 so the umask
// applies as it does to any file the user creates; `named` is the path errors name.
int create_temporary(const std::string& stem, const std::string& named, std::string& temporary) {
  static std::atomic<unsigned> attempt{0};
  for (int tries = 0; tries < 100; ++tries) {
    temporary = stem + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(attempt++);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) cannot_write(named, errno);
  }
  cannot_write(named, EEXIST);
}

// A character device is opened without blocking (a FIFO put there since would
// block) and checked again once open.
void write_through_device(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) cannot_write(path, errno);
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    const int error = errno;
    ::close(fd);
    cannot_write(path, error);
  }
  if (!S_ISCHR(status.st_mode)) {
    ::close(fd);
    refuse(path, status.st_mode);
  }
  const bool ok = ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 && write_all(fd, text);
  const int error = errno;
  ::close(fd);
  if (!ok) cannot_write(path, error);
}

}  // namespace

void write_text_atomically(const std::string& path, const std::string& text) {
  if (path.empty()) throw CommandError(kExitBadInput, "cannot write to an empty file name");
  struct stat status {};
  const bool exists = ::lstat(path.c_str(), &status) == 0;
  if (!exists && errno != ENOENT) cannot_write(path, errno);
  if (exists && S_ISCHR(status.st_mode)) return write_through_device(path, text);
  if (exists && !S_ISREG(status.st_mode)) refuse(path, status.st_mode);
  // The temporary sits next to the target so the rename stays on one file system;
  // the rename replaces whatever entry is there by then, never what a link points to.
  std::string temporary;
  const int fd = create_temporary(path, path, temporary);
  // A replaced file keeps its mode (a private 600 file stays private).
  bool ok = write_all(fd, text) && (!exists || ::fchmod(fd, status.st_mode & 0777) == 0);
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
  std::string temporary;
  ::close(create_temporary(stem, named, temporary));
  ::unlink(temporary.c_str());
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) throw CommandError(kExitBadInput, "cannot write to an empty file name");
  if (path == "-") return;
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) {
    if (errno != ENOENT) cannot_write(path, errno);
  } else if (S_ISCHR(status.st_mode)) {
    return;
  } else if (!S_ISREG(status.st_mode)) {
    refuse(path, status.st_mode);
  }
  probe(path, path);
}

void check_writable_folder(const std::string& folder, const std::vector<std::string>& file_suffixes) {
  if (folder.empty()) throw CommandError(kExitBadInput, "cannot write to an empty folder name");
  struct stat status {};
  if (::stat(folder.c_str(), &status) == 0) {
    if (!S_ISDIR(status.st_mode)) cannot_write(folder, ENOTDIR);
    probe(folder + "/.wafersim", folder);
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      const std::string name = entry.path().filename().string();
      if (std::none_of(file_suffixes.begin(), file_suffixes.end(),
                       [&](const std::string& suffix) { return ends_with(name, suffix); }))
        continue;
      const std::string path = entry.path().string();
      if (::lstat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) refuse(path, status.st_mode);
    }
    if (error) cannot_write(folder, error.value());
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
  // Opened without blocking and checked once open: only a regular file (or a
  // character device) is appended to.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0 && errno == ELOOP) refuse(path, S_IFLNK);
  if (fd < 0 && errno == ENXIO) refuse(path, S_IFIFO);  // a FIFO nobody reads
  if (fd < 0) cannot_write(path, errno);
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !(S_ISREG(status.st_mode) || S_ISCHR(status.st_mode))) {
    const int error = errno;
    ::close(fd);
    if (status.st_mode == 0) cannot_write(path, error);
    refuse(path, status.st_mode);
  }
  const bool ok = ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 && write_all(fd, text);
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
