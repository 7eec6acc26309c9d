// The SystemC library calls sc_main; Catch2 runs from here.
#define CATCH_CONFIG_RUNNER
#include <cstdlib>

#include <catch2/catch.hpp>

__attribute__((constructor)) static void silence_systemc_banner() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
}

extern "C" int sc_main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
