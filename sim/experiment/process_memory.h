#pragma once
// What a run cost the machine, for the figures every result carries.
#include <cstdint>

namespace wafersim {

// Peak resident memory of this process so far (VmHWM), 0 where unknown.
uint64_t peak_rss_bytes();

}  // namespace wafersim
