// wafersim: command-line entry point. The SystemC library supplies main() and
// calls sc_main, so this is where the program starts.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "mapping/does_not_fit.h"
#include "models/config/error.h"
#include "models/config/text.h"
#include "sim/cli/commands.h"
#include "sim/experiment/version.h"
#include "sim/reports/exit_codes.h"

// The SystemC banner would be printed before sc_main runs; the variable must be
// set while the program is still being initialised.
__attribute__((constructor)) static void silence_systemc_banner() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
}

// SystemC declares sc_main with C linkage.
extern "C" int sc_main(int argc, char* argv[]) {
  using namespace wafersim;

  CLI::App app{
      "wafersim: cycle-approximate simulator of a wafer-scale accelerator running LLM inference (prefill, decode, "
      "speculative decoding and serving)"};
  app.set_version_flag("--version", std::string("wafersim ") + version());
  app.require_subcommand(1);
  cli::add_run_command(app);
  cli::add_analytic_command(app);
  cli::add_compare_command(app);
  cli::add_map_command(app);
  cli::add_sweep_command(app);
  cli::add_sweep_point_command(app);
  cli::add_search_command(app);
  cli::add_validate_command(app);
  cli::add_describe_command(app);
  cli::add_bench_command(app);
  cli::add_serve_command(app);
  cli::add_report_command(app);

  // Every failure is exactly one line on stderr, so scripts can show or grep it.
  auto report = [](const char* kind, const std::string& message) {
    std::cerr << kind << ": " << config::one_line(message) << "\n";
  };
  try {
    // CLI11 would call an unknown command an unexpected argument; name it instead.
    if (argc > 1 && argv[1][0] != '-') {
      std::vector<std::string> names;
      for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
        if (!command->get_group().empty()) names.push_back(command->get_name());  // hidden ones unnamed
      if (std::string(argv[1]) == "sweep-point") names.push_back(argv[1]);
      if (std::find(names.begin(), names.end(), argv[1]) == names.end())
        throw cli::CommandError(cli::kExitBadInput, "unknown command " + config::quoted(argv[1]) +
                                                        " (commands: " + config::join(names) + ")" +
                                                        config::did_you_mean(argv[1], names));
    }
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    report("error", std::string(e.what()) + " (see wafersim --help)");
    return cli::kExitBadInput;
  } catch (const config::ConfigError& e) {
    report("error", e.what());
    return cli::kExitBadInput;
  } catch (const mapping::DoesNotFitError& e) {
    report("does not fit", e.what());
    return cli::kExitDoesNotFit;
  } catch (const cli::CommandError& e) {
    report("error", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    // The experiment asked for more memory than this process can take: the
    // machine, not the input, is too small (exit 3, as a model too large).
    report("does not fit",
           "this process ran out of memory (the plan or the simulation is larger than the memory "
           "available to it; fewer wafers or a smaller model need less)");
    return cli::kExitDoesNotFit;
  } catch (const std::exception& e) {
    report("internal error", e.what());
    return cli::kExitInternal;
  }
  return cli::kExitOk;
}
