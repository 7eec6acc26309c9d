#include <map>
#include <stdexcept>

#include "sim/backend/backend.h"

namespace wafersim::backend {

namespace {

struct Registered {
  std::string description;
  BackendRegistration::Maker maker;
};

// Filled at static initialisation by each backend's BackendRegistration; a
// function-local static, so it exists before the first registration needs it.
std::map<std::string, Registered>& registry() {
  static std::map<std::string, Registered> backends;
  return backends;
}

const Registered& registered(const std::string& name) {
  const auto found = registry().find(name);
  if (found == registry().end()) {
    std::string known;
    for (const std::string& each : backend_names()) known += (known.empty() ? "" : ", ") + each;
    throw std::invalid_argument("unknown backend '" + name + "' (backends: " + known + ")");
  }
  return found->second;
}

}  // namespace

BackendRegistration::BackendRegistration(const char* name, const char* description, Maker maker) {
  if (!registry().emplace(name, Registered{description, maker}).second)
    throw std::logic_error(std::string("two backends register the name '") + name + "'");
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

std::string backend_description(const std::string& name) { return registered(name).description; }

std::unique_ptr<Backend> make_backend(const std::string& name) { return registered(name).maker(); }

}  // namespace wafersim::backend
