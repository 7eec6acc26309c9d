#include "sim/engine/version.h"

namespace wafersim {
const char* version() { return WAFERSIM_VERSION; }
}  // namespace wafersim
