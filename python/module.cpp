// wafersim._core: the Python module's link to the library. Each function takes
// a loaded configuration and returns the JSON document of the matching command
// as text (the Python side turns it into a dict), so the module and the CLI
// share one implementation: sim/reports/reports.h.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "mapping/does_not_fit.h"
#include "models/config/error.h"
#include "sim/backend/child_process.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/version.h"
#include "sim/reports/command_error.h"
#include "sim/reports/compare_report.h"
#include "sim/reports/compile.h"
#include "sim/reports/functional_check.h"
#include "sim/reports/reports.h"
#include "sim/reports/serve_report.h"

namespace py = pybind11;
using namespace wafersim;

// libsystemc's own main() calls sc_main, so the library needs the symbol to
// load. The module never enters SystemC through it: the engine elaborates and
// runs its design itself, in the child process of each run().
extern "C" __attribute__((visibility("default"))) int sc_main(int, char*[]) { return 1; }

namespace {

// The exception classes live in wafersim/_errors.py so that Python code can
// catch and raise them; they are looked up once, when the module loads.
struct ErrorTypes {
  py::object error, config_error, does_not_fit_from_record;
};
ErrorTypes* error_types = nullptr;

// A plan, or DoesNotFit carrying the record `--json` would hold.
mapping::Plan compile_for(const Experiment& experiment) {
  try {
    return compile_plan(experiment);
  } catch (const mapping::DoesNotFitError& error) {
    throw reports::CommandError(reports::kExitDoesNotFit,
                                reports::does_not_fit_record(error.what(), experiment).dump());
  }
}

std::string decode(const config::Config& config, const std::string& backend_name) {
  const auto begin = std::chrono::steady_clock::now();
  const Experiment experiment = experiment_from_config(config);
  reports::refuse_impossible_functional_check(experiment);  // before compiling, as the CLI and validate
  const mapping::Plan plan = compile_for(experiment);
  return reports::decode_report(experiment, plan, backend_name, {}, begin).document.dump();
}

std::string analytic(const config::Config& config) {
  py::gil_scoped_release release;
  return decode(config, "analytic");
}

std::string map_plan(const config::Config& config) {
  py::gil_scoped_release release;
  const Experiment experiment = experiment_from_config(config);
  const auto begin = std::chrono::steady_clock::now();
  const mapping::Plan plan = compile_for(experiment);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return reports::map_report(experiment, plan, seconds).document.dump();
}

// `wafersim compare --against GPUxN`: the closed form beside the GPU reference.
std::string compare(const config::Config& config, const std::string& against) {
  py::gil_scoped_release release;
  GpuSystem system;
  const std::string bad_against = parse_gpu_system(against, &system);
  if (!bad_against.empty()) throw reports::CommandError(reports::kExitBadInput, "against: " + bad_against);
  const Experiment experiment = experiment_from_config(config);
  gpu_reference::Result gpu;
  try {
    gpu = reports::gpu_reference_of(experiment, system);
  } catch (const mapping::DoesNotFitError& error) {
    throw reports::CommandError(reports::kExitDoesNotFit,
                                reports::does_not_fit_record(error.what(), experiment).dump());
  }
  const mapping::Plan plan = compile_for(experiment);
  return reports::compare_report(experiment, plan, gpu, {}).document.dump();
}

// `wafersim serve` over the closed form (the engine elaborates once per
// process, so a Python process serves with the analytic backend only).
std::string serve(const config::Config& config) {
  py::gil_scoped_release release;
  const Experiment experiment = experiment_from_config(config);
  const std::unique_ptr<backend::Backend> backend = backend::make_backend("analytic");
  return reports::serve_json(experiment, reports::serve_run(experiment, compile_for, *backend)).dump();
}

std::string validate(const config::Config& config, const std::string& name) {
  reports::check_experiment(config);  // what `wafersim validate` checks
  return reports::validate_document(config, name).dump();
}

std::string describe_model(const std::string& name, uint64_t context, uint32_t batch) {
  if (name.empty()) return reports::model_list_report({}).document.dump();
  return reports::describe_model_report(name, context, batch, {}).document.dump();
}

// What the child of `run` sends back: one JSON object, either the result or the error.
std::string outcome_of_run(const config::Config& config) {
  try {
    return nlohmann::json{{"result", nlohmann::json::parse(decode(config, "sim"))}}.dump();
  } catch (const config::ConfigError& e) {
    return nlohmann::json{{"config_error",
                           {{"what", e.what()},
                            {"file", e.where().file},
                            {"line", e.where().line},
                            {"column", e.where().column},
                            {"key", e.key()}}}}
        .dump();
  } catch (const reports::CommandError& e) {
    return nlohmann::json{{"command_error", {{"what", e.what()}, {"exit_code", e.exit_code()}}}}.dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"internal_error", e.what()}}.dump();
  }
}

// Asked by the waiting parent ten times a second: true when the run must stop,
// with the exception to raise set. One a signal handler raised (Ctrl-C:
// KeyboardInterrupt; Python runs its handlers in the main thread only, so
// elsewhere this finds none), or, once `cancel` (a threading.Event, or None)
// is set, wafersim.Error: how a sweep stops the runs of its other threads.
bool run_must_stop(const py::object& cancel) {
  py::gil_scoped_acquire acquire;
  if (PyErr_CheckSignals() != 0) return true;
  if (cancel.is_none()) return false;
  try {
    if (!cancel.attr("is_set")().cast<bool>()) return false;
  } catch (py::error_already_set& error) {
    error.restore();
    return true;
  }
  PyErr_SetString(error_types->error.ptr(), "the run was cancelled");
  return true;
}

// In the child, a signal that a Python handler of the parent's catches (SIGINT
// by default) is the parent's to act on: the handler's C part would set flags
// no one reads and write to the parent's wakeup fd. Ignored; the parent kills
// the child when its handler raises.
void leave_python_signals_to_the_parent() {
  for (int number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    struct sigaction action {};
    if (::sigaction(number, nullptr, &action) != 0) continue;
    const bool handled = (action.sa_flags & SA_SIGINFO) ? action.sa_sigaction != nullptr
                                                        : action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
    if (handled) std::signal(number, SIG_IGN);
  }
}

// SystemC elaborates one design per process, so each simulation runs in a
// child process of its own (fork: the configuration is already in memory)
// and sends its outcome back through a pipe. Returns the outcome's JSON text.
// A Python signal handler that raises while it runs (Ctrl-C: KeyboardInterrupt),
// or `cancel` set, kills the child, and its prefill child with it, and the
// exception propagates.
std::string run_in_child(const config::Config& config, const py::object& cancel) {
  backend::ChildOutput output;
  {
    // The child touches no Python object and leaves with _exit: no interpreter clean-up runs twice.
    py::gil_scoped_release release;
    output = backend::run_in_forked_child(
        [&] {
          leave_python_signals_to_the_parent();
          return std::make_pair(outcome_of_run(config), 0);
        },
        [&] { return run_must_stop(cancel); });
  }
  if (output.stopped) throw py::error_already_set();
  if (output.signal != 0)
    throw std::runtime_error("the simulation process was killed by signal " + std::to_string(output.signal) + " (" +
                             strsignal(output.signal) + ")");
  if (output.exit_status != 0 || output.text.empty())
    throw std::runtime_error("the simulation process failed without a result");
  return output.text;
}

void translate(std::exception_ptr pointer) {
  try {
    if (pointer) std::rethrow_exception(pointer);
  } catch (const config::ConfigError& e) {
    py::object error = error_types->config_error(e.what(), e.where().file, e.where().line, e.where().column, e.key());
    PyErr_SetObject(error_types->config_error.ptr(), error.ptr());
  } catch (const reports::CommandError& e) {
    if (e.exit_code() == reports::kExitDoesNotFit) {
      py::object error = error_types->does_not_fit_from_record(e.what());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    } else {
      PyErr_SetString(error_types->error.ptr(), e.what());
    }
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(error_types->error.ptr(), e.what());
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "wafersim's library, as the wafersim package calls it (see docs/PYTHON.md)";
  // As the wafersim program does: no SystemC banner in a simulation's output.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  py::module_ errors = py::module_::import("wafersim._errors");
  // Kept for the life of the process: the translator may run at any time.
  error_types =
      new ErrorTypes{errors.attr("Error"), errors.attr("ConfigError"), errors.attr("_does_not_fit_from_record")};
  py::register_exception_translator(&translate);

  py::class_<config::Config>(m, "Config")
      .def("to_yaml", &config::Config::to_yaml)
      .def("hash", &config::Config::hash)
      .def("preset", &config::Config::preset);
  m.def("load_text", &load_experiment_text_config, py::arg("yaml_text"), py::arg("name"), py::arg("overrides"));
  m.def("load_path", &load_experiment_config, py::arg("path"), py::arg("overrides"));
  m.def("analytic", &analytic);
  m.def("compare", &compare, py::arg("config"), py::arg("against"));
  m.def("map", &map_plan);
  m.def("validate", &validate);
  m.def("serve", &serve);
  m.def("describe_model", &describe_model);
  m.def("run", &run_in_child, py::arg("config"), py::arg("cancel") = py::none());
  m.def("version", &version);
}
