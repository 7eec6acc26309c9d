#include <stdexcept>

#include "sim/backend/backend.h"

namespace wafersim::backend {

std::unique_ptr<Backend> make_engine_backend();
std::unique_ptr<Backend> make_analytic_backend();

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = {"sim", "analytic"};
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "sim") return make_engine_backend();
  if (name == "analytic") return make_analytic_backend();
  throw std::invalid_argument("unknown backend '" + name + "' (backends: sim, analytic)");
}

}  // namespace wafersim::backend
