#include "sim/experiment/process_memory.h"

#include <cstdio>

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

}  // namespace wafersim
