#pragma once
// The temporary files an interrupted sweep may leave behind.
#include <string>

namespace wafersim::cli::sweep {

// Removes the temporary files an interrupted sweep may have left in `folder`.
void remove_temporary_files(const std::string& folder);

// The name a point's temporary files carry: "<name>.tmp" or "<name>.tmp-XXXXXX".
bool is_temporary_name(const std::string& file_name);

}  // namespace wafersim::cli::sweep
