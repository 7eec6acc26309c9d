// Backends register themselves from their own files (sim/backend/backends.cpp):
// every maker the build holds is listed, each under the name it reports.
#include <stdexcept>

#include <catch2/catch.hpp>

#include "sim/backend/backend.h"

using namespace wafersim;

TEST_CASE("every backend registers itself under the name it reports", "[backend]") {
  const std::vector<std::string> expected = {"analytic", "sim"};
  CHECK(backend::backend_names() == expected);
  for (const std::string& name : backend::backend_names()) CHECK(backend::make_backend(name)->name() == name);
}

TEST_CASE("an unknown backend name is refused with the registered ones", "[backend]") {
  CHECK_THROWS_WITH(backend::make_backend("cycle"), "unknown backend 'cycle' (backends: analytic, sim)");
  CHECK_THROWS_AS(backend::make_backend(""), std::invalid_argument);
}
