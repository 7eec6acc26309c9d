#include "sim/reports/config_json.h"

#include <string>
#include <type_traits>

namespace wafersim::reports {

nlohmann::json value_json(const config::Value& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

nlohmann::json config_json(const config::Config& config) {
  nlohmann::json document = nlohmann::json::object();
  for (const config::ParamSpec& spec : config.schema().params()) {
    const config::Value& value = config.entries().at(spec.path).value;
    std::string pointer = "/" + spec.path;
    for (char& c : pointer)
      if (c == '.') c = '/';
    document[nlohmann::json::json_pointer(pointer)] = value_json(value);
  }
  return document;
}

}  // namespace wafersim::reports
