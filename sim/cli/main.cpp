// wafersim: command-line entry point. The SystemC library supplies main() and
// calls sc_main, so this is where the program starts.
#include <cstdlib>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "models/config/error.h"
#include "sim/cli/commands.h"

// The SystemC banner would be printed before sc_main runs; the variable must be
// set while the program is still being initialised.
__attribute__((constructor)) static void silence_systemc_banner() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
}

// SystemC declares sc_main with C linkage.
extern "C" int sc_main(int argc, char* argv[]) {
  using namespace wafersim;

  CLI::App app{"wafersim: cycle-approximate simulator of a wafer-scale accelerator running LLM decode"};
  app.set_version_flag("--version", std::string("wafersim ") + WAFERSIM_VERSION);
  app.require_subcommand(1);
  cli::add_run_command(app);
  cli::add_analytic_command(app);
  cli::add_map_command(app);
  cli::add_sweep_command(app);
  cli::add_validate_command(app);
  cli::add_describe_command(app);
  cli::add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return config::kExitBadInput;
  } catch (const config::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const config::DoesNotFitError& e) {
    std::cerr << "does not fit: " << e.what() << "\n";
    return config::kExitDoesNotFit;
  } catch (const cli::CommandError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return config::kExitInternal;
  }
  return config::kExitOk;
}
