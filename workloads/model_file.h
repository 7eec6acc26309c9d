#pragma once
// Reading a model on its own, outside an experiment: by zoo name or model file.
#include <string>
#include <vector>

#include "workloads/model_spec.h"

namespace wafersim::workloads {

struct LoadedModel {
  ModelSpec model;
  std::string source;  // the file the model came from ("workloads/models/llama3.1-8b.yaml")
};

// `name_or_path` is a zoo name (workloads/models/NAME.yaml, compiled in) or the
// path of a model file holding the model section's keys. Overrides are
// "model.key=value". Errors are ConfigErrors naming file, line and key.
LoadedModel load_model(const std::string& name_or_path, const std::vector<std::string>& overrides = {});

// The section `model: REFERENCE` on its own (a zoo name, or a model file
// relative to the working directory), "model.key=value" overrides applied.
config::Config load_model_config(const std::string& reference, const std::vector<std::string>& overrides = {});

// Names of the zoo models, sorted.
std::vector<std::string> zoo_model_names();

}  // namespace wafersim::workloads
