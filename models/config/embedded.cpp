#include "models/config/embedded.h"

namespace wafersim {

const EmbeddedFile* find_embedded(const std::vector<EmbeddedFile>& table, const std::string& name) {
  for (const EmbeddedFile& file : table)
    if (name == file.name) return &file;
  return nullptr;
}

}  // namespace wafersim
