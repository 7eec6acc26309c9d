#include "sim/cli/sweep/temporary_files.h"

#include <filesystem>

namespace wafersim::cli::sweep {

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
