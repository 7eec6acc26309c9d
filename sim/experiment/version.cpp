#include "sim/experiment/version.h"

namespace wafersim {
const char* version() { return WAFERSIM_VERSION; }
}  // namespace wafersim
