#pragma once
// One experiment: the resolved configuration of every section (hardware, model,
// workload, mapping, sim) and the typed specs read from it. What every command
// that takes an experiment starts from.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mapping/mapping_options.h"
#include "mapping/plan.h"
#include "models/config/config.h"
#include "models/hardware.h"
#include "sim/experiment/sim_options.h"
#include "workloads/model_spec.h"
#include "workloads/speculative_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim {

// Every parameter of every section (hardware, model, workload, mapping, sim).
const config::Schema& experiment_schema();

// The sections that take a preset name, each with its presets (hardware:
// models/presets, model: the zoo).
const std::map<std::string, const std::vector<EmbeddedFile>*>& preset_sections();

// The name errors give an experiment read from standard input ("<stdin>:3:5: ...").
inline constexpr const char* kStdinName = "<stdin>";

// Loads and validates an experiment file with --set overrides applied. The
// path "-" reads the YAML from standard input; files it names by relative path
// are then relative to the working directory. The empty path is the built-in
// default experiment (workloads/experiments/quickstart.yaml, compiled in).
config::Config load_experiment_config(const std::string& path, const std::vector<std::string>& overrides);
// The same from YAML text; `name` stands for the file in error messages, and
// files named by relative path are relative to the working directory.
config::Config load_experiment_text_config(const std::string& yaml_text, const std::string& name,
                                           const std::vector<std::string>& overrides);

// The name errors and reports give the built-in default experiment.
inline constexpr const char* kDefaultExperimentName = "workloads/experiments/quickstart.yaml (built in)";
// The name errors give an experiment_with() variant (its overrides are what is new).
inline constexpr const char* kWhatIfName = "<resolved experiment>";

struct Experiment {
  config::Config config;
  HardwareSpec hardware;
  workloads::ModelSpec model;
  workloads::WorkloadSpec workload;
  mapping::MappingOptions mapping;
  SimOptions sim;
  std::optional<workloads::SpeculativeSpec> speculative;  // workload.speculative; none: plain decoding
};

// Tokens (batch x decode_tokens) one experiment may generate: their timings are kept.
constexpr uint64_t kMaxIterations = uint64_t(1) << 20;

// The config and every typed spec read from it (cross-field checks included).
Experiment experiment_from_config(const config::Config& config);
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides);
// The same from YAML text; `name` stands for the file in error messages.
Experiment load_experiment_text(const std::string& yaml_text, const std::string& name,
                                const std::vector<std::string>& overrides = {});

// The values of a section built from a preset that differ from the preset's,
// by full path ("hardware.tile.sram_bytes"); none for a section without a preset.
struct PresetChange {
  std::string path;
  config::Value value, preset_value;
};
std::vector<PresetChange> preset_changes(const config::Config& config, const std::string& section);

// How reports name a section built from a preset: "wse3", or, when values
// differ from the preset's, "wse3 (modified: hop_latency_cycles=2)" (each
// parameter by its key, with its value; at most four, then "and N more").
// A section given as a file or a mapping is named `name` (the spec's name).
std::string section_label(const config::Config& config, const std::string& section, const std::string& name);

// The experiment again with more "key=value" overrides, as `--set` gives
// them: from its resolved configuration, with the files it names (a defect
// map, a serving trace) where it found them, wherever the process runs.
Experiment experiment_with(const Experiment& experiment, const std::vector<std::string>& overrides);

// The compiler's plan for the experiment.
mapping::Plan compile_plan(const Experiment& experiment);

}  // namespace wafersim
