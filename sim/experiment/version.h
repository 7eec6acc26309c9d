#pragma once

namespace wafersim {
// "0.1.0": the project version every result carries.
const char* version();
}  // namespace wafersim
