#include "models/config/config.h"
#include "models/config/value_text.h"

namespace wafersim::config {

std::string describe_params(const Schema& schema, const std::string& prefix) {
  std::string out;
  for (const ParamSpec& spec : schema.params()) {
    if (spec.path.compare(0, prefix.size(), prefix) != 0) continue;
    out += spec.path + "  (" + to_string(spec.type) + (spec.unit.empty() ? "" : ", " + spec.unit) + ")\n";
    out += "    default: " + (spec.default_value ? *spec.default_value : std::string("required")) + "\n";
    std::string allowed = range_description(spec);
    if (!allowed.empty()) out += "    allowed: " + allowed + "\n";
    out += "    " + spec.description + "\n";
  }
  return out;
}

}  // namespace wafersim::config
