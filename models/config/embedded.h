#pragma once
// Data files compiled into the binary (see scripts/embed_files.cmake).
#include <string>
#include <vector>

namespace wafersim {

struct EmbeddedFile {
  const char* name;  // preset name, e.g. "wse3" or "llama3.1-8b"
  const char* path;  // path relative to the source tree, used in error messages
  const char* text;  // file contents
};

// One table per kind of data; each library defines its own.
const std::vector<EmbeddedFile>& embedded_hardware_presets();    // models/presets
const std::vector<EmbeddedFile>& embedded_model_zoo();           // workloads/models
const std::vector<EmbeddedFile>& embedded_default_experiment();  // workloads/experiments/quickstart.yaml

// Finds a file by name in a table; nullptr when absent.
const EmbeddedFile* find_embedded(const std::vector<EmbeddedFile>& table, const std::string& name);

}  // namespace wafersim
