#include "sim/cli/sweep/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/cli/commands.h"

namespace wafersim::cli::sweep {

namespace {

[[noreturn]] void cannot_write(const std::string& path, int error) {
  throw CommandError(2, "cannot write " + path + ": " + std::strerror(error));
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    done += size_t(written);
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  // No fsync: the rename protects against a killed process, which is what a
  // sweep meets; a sweep is cheap to resume after a machine crash.
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

void append_to_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  const bool ok = write_all(fd, text);
  const int error = errno;
  ::close(fd);
  if (!ok) cannot_write(path, error);
}

bool is_temporary_name(const std::string& file_name) {
  const size_t at = file_name.rfind(".tmp");
  return at != std::string::npos && (at + 4 == file_name.size() || file_name.compare(at, 5, ".tmp-") == 0);
}

void remove_temporary_files(const std::string& folder) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ignored))
    if (is_temporary_name(entry.path().filename().string())) std::filesystem::remove(entry.path(), ignored);
}

}  // namespace wafersim::cli::sweep
