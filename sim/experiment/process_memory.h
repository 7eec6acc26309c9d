#pragma once
// What a run cost the machine, for the figures every result carries.
#include <cstdint>

namespace wafersim {

// Peak resident memory of this process so far (VmHWM), 0 where unknown.
uint64_t peak_rss_bytes();

// Memory this process may still take: the least of the machine's available
// memory (MemAvailable), the room left under the address-space and data limits
// (ulimit -v, -d) and under the cgroup's memory.max; UINT64_MAX where none is known.
uint64_t memory_available_bytes();

}  // namespace wafersim
