#include "sim/experiment/process_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <sys/resource.h>

namespace wafersim {

uint64_t peak_rss_bytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof line, status) != nullptr)
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
  std::fclose(status);
  return kib * 1024;
}

namespace {

// The number after `key` in a "/proc" style file of "key value" lines, or 0.
uint64_t field_of(const char* path, const char* key) {
  std::FILE* file = std::fopen(path, "r");
  if (file == nullptr) return 0;
  char line[256];
  uint64_t value = 0;
  const size_t key_length = std::strlen(key);
  while (std::fgets(line, sizeof line, file) != nullptr)
    if (std::strncmp(line, key, key_length) == 0) {
      std::sscanf(line + key_length, "%lu", &value);
      break;
    }
  std::fclose(file);
  return value;
}

// The first number in a file ("max" and missing files read as unlimited).
uint64_t number_in(const char* path) {
  std::FILE* file = std::fopen(path, "r");
  if (file == nullptr) return UINT64_MAX;
  uint64_t value = UINT64_MAX;
  if (std::fscanf(file, "%lu", &value) != 1) value = UINT64_MAX;
  std::fclose(file);
  return value;
}

uint64_t room_under(uint64_t limit, uint64_t used) { return limit > used ? limit - used : 0; }

}  // namespace

uint64_t memory_available_bytes() {
  uint64_t available = UINT64_MAX;
  if (const uint64_t kib = field_of("/proc/meminfo", "MemAvailable:")) available = kib * 1024;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    available = std::min(available, room_under(limit.rlim_cur, field_of("/proc/self/status", "VmSize:") * 1024));
  if (::getrlimit(RLIMIT_DATA, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    available = std::min(available, room_under(limit.rlim_cur, field_of("/proc/self/status", "VmData:") * 1024));
  const uint64_t cgroup_max = number_in("/sys/fs/cgroup/memory.max");
  if (cgroup_max != UINT64_MAX)
    available = std::min(available, room_under(cgroup_max, number_in("/sys/fs/cgroup/memory.current")));
  return available;
}

}  // namespace wafersim
