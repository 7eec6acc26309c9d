#include "workloads/model_file.h"

#include <filesystem>

#include "models/config/config.h"
#include "models/config/text.h"
#include "models/config/value_text.h"
#include "workloads/hf_config.h"

namespace wafersim::workloads {

namespace {

const config::Schema& model_schema() {
  static const config::Schema schema{declare_model_params};
  return schema;
}

}  // namespace

LoadedModel load_model(const std::string& name_or_path, const std::vector<std::string>& overrides) {
  const std::vector<EmbeddedFile>& zoo = embedded_model_zoo();
  LoadedModel loaded;
  std::string reference = name_or_path;
  if (const EmbeddedFile* preset = find_embedded(zoo, name_or_path)) {
    loaded.source = preset->path;
  } else {
    // The loader resolves relative paths against the referring file; there is none here.
    std::error_code error;
    if (!std::filesystem::is_regular_file(name_or_path, error))
      throw config::ConfigError({name_or_path, 0, 0}, "model",
                                "neither a zoo model (" + config::join(zoo_model_names()) + ") nor a model file" +
                                    config::did_you_mean(name_or_path, zoo_model_names()));
    reference = std::filesystem::absolute(name_or_path, error).string();
    loaded.source = name_or_path;
  }

  const config::Config config = load_model_config(reference, overrides);
  loaded.model = model_from_config(config, std::filesystem::path(name_or_path).stem().string());
  return loaded;
}

config::Config load_model_config(const std::string& reference, const std::vector<std::string>& overrides) {
  config::LoadOptions options;
  options.overrides = overrides;
  options.presets["model"] = &embedded_model_zoo();
  add_hf_config_reader(options);
  return config::load_string(model_schema(), "model: " + config::yaml_scalar(reference) + "\n", "<command line>",
                             options);
}

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : embedded_model_zoo()) names.emplace_back(file.name);
  return names;
}

}  // namespace wafersim::workloads
