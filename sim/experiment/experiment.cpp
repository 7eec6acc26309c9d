#include "sim/experiment/experiment.h"

#include <algorithm>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "models/config/value_text.h"
#include "models/hardware.h"
#include "sim/experiment/process_memory.h"
#include "sim/experiment/sim_options.h"
#include "sim/experiment/speculative_placement.h"
#include "workloads/hf_config.h"
#include "workloads/model_file.h"
#include "workloads/model_spec.h"
#include "workloads/serving/serving_spec.h"
#include "workloads/speculative_spec.h"
#include "workloads/workload_spec.h"

namespace wafersim {

const config::Schema& experiment_schema() {
  static const config::Schema schema{declare_hardware_params,
                                     declare_sim_params,
                                     workloads::declare_model_params,
                                     workloads::declare_workload_params,
                                     workloads::declare_speculative_params,
                                     mapping::declare_mapping_params,
                                     workloads::declare_serving_params};
  return schema;
}

namespace {

config::LoadOptions load_options(const std::vector<std::string>& overrides) {
  config::LoadOptions options;
  options.overrides = overrides;
  options.presets = preset_sections();
  workloads::add_hf_config_reader(options);
  return options;
}

// A section's preset loaded alone, to compare an experiment's values with.
config::Config preset_config(const std::string& section, const std::string& preset) {
  if (section == "hardware") return load_hardware_config(preset);
  if (section == "model") return workloads::load_model_config(preset);
  throw std::logic_error("section_label: no presets for section " + section);
}

}  // namespace

const std::map<std::string, const std::vector<EmbeddedFile>*>& preset_sections() {
  static const std::map<std::string, const std::vector<EmbeddedFile>*> sections = {
      {"hardware", &embedded_hardware_presets()}, {"model", &embedded_model_zoo()}};
  return sections;
}

std::vector<PresetChange> preset_changes(const config::Config& config, const std::string& section) {
  const std::string& preset = config.preset(section);
  if (preset.empty()) return {};
  const config::Config original = preset_config(section, preset);
  std::vector<PresetChange> changes;
  for (const config::ParamSpec& spec : original.schema().params()) {
    const config::Value& value = config.entries().at(spec.path).value;
    const config::Value& preset_value = original.entries().at(spec.path).value;
    if (value != preset_value) changes.push_back({spec.path, value, preset_value});
  }
  return changes;
}

std::string section_label(const config::Config& config, const std::string& section, const std::string& name) {
  const std::string& preset = config.preset(section);
  if (preset.empty()) return name;
  std::vector<std::string> changes;
  for (const PresetChange& change : preset_changes(config, section))
    changes.push_back(change.path.substr(change.path.rfind('.') + 1) + "=" + config::value_text(change.value));
  if (changes.empty()) return preset;
  constexpr size_t kShown = 4;
  std::string text;
  for (size_t i = 0; i < std::min(changes.size(), kShown); ++i) text += (i ? ", " : "") + changes[i];
  if (changes.size() > kShown) text += " and " + std::to_string(changes.size() - kShown) + " more";
  return preset + " (modified: " + text + ")";
}

config::Config load_experiment_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (path == "-") {
    std::ostringstream text;
    text << std::cin.rdbuf();
    return config::load_string(experiment_schema(), text.str(), kStdinName, load_options(overrides));
  }
  if (path.empty())
    return config::load_string(experiment_schema(), embedded_default_experiment().front().text, kDefaultExperimentName,
                               load_options(overrides));
  return config::load_file(experiment_schema(), path, load_options(overrides));
}

config::Config load_experiment_text_config(const std::string& yaml_text, const std::string& name,
                                           const std::vector<std::string>& overrides) {
  return config::load_string(experiment_schema(), yaml_text, name, load_options(overrides));
}

namespace {

// Latent attention is laid out by the distributed dataflow's groups attention
// and timed with GEMVs (regions.cpp, add_latent_attention); the other layouts
// have no latent steps.
void refuse_latent_attention_layouts(const config::Config& config, const mapping::MappingOptions& mapping) {
  const std::string why = "multi-head latent attention (model.mla) is laid out ";
  if (mapping.dataflow == mapping::Dataflow::Root)
    config.fail_given({"mapping.dataflow", "model.mla.kv_lora_rank"},
                      why + "by the distributed dataflow only (mapping.dataflow: distributed)");
  if (mapping.attention == mapping::AttentionLayout::Grid)
    config.fail_given({"mapping.attention", "model.mla.kv_lora_rank"},
                      why + "by the groups attention only (mapping.attention: groups)");
  if (mapping.prefill_attention == mapping::AttentionLayout::Grid && !config.is_default("mapping.prefill_attention"))
    config.fail_given({"mapping.prefill_attention", "model.mla.kv_lora_rank"},
                      why + "by the groups attention only, in a prefill too (mapping.prefill_attention: decode)");
  if (mapping.prefill_gemm == mapping::PrefillGemm::MeshGemm)
    config.fail_given({"mapping.prefill_gemm", "model.mla.kv_lora_rank"},
                      why + "with chunked GEMVs in a prefill only (mapping.prefill_gemm: chunked_gemv)");
}

}  // namespace

Experiment experiment_from_config(const config::Config& config) {
  Experiment experiment{config,
                        hardware_from_config(config),
                        workloads::model_from_config(config),
                        workloads::workload_from_config(config),
                        mapping::mapping_options_from_config(config),
                        sim_options_from_config(config),
                        std::nullopt};
  workloads::check_workload_against_model(config, experiment.workload, experiment.model);
  experiment.speculative = workloads::speculative_from_config(config, experiment.model, experiment.workload);
  // Every token of every sequence is an iteration whose timing is kept for the metrics.
  const uint64_t iterations = uint64_t(experiment.workload.batch) * experiment.workload.decode_tokens;
  if (iterations > kMaxIterations)
    config.fail_given({"workload.batch", "workload.decode_tokens"},
                      "batch x decode_tokens = " + std::to_string(iterations) + " tokens; at most " +
                          std::to_string(kMaxIterations) + " per experiment");
  const mapping::MappingOptions& mapping = experiment.mapping;
  const HardwareSpec& hw = experiment.hardware;
  if (experiment.model.is_mla()) refuse_latent_attention_layouts(config, mapping);
  if (mapping.layer_columns > hw.grid_width)
    config.fail_given({"mapping.layer_grid.columns", "hardware.grid_width"},
                      "a layer region of " + std::to_string(mapping.layer_columns) + " columns is wider than the " +
                          std::to_string(hw.grid_width) + "-tile " + hw.name + " wafer");
  if (mapping.strips > hw.grid_width)
    config.fail_given({"mapping.strips", "hardware.grid_width"},
                      std::to_string(mapping.strips) + " strips of at least one column do not fit the " +
                          std::to_string(hw.grid_width) + "-column " + hw.name + " wafer");
  if (mapping.layer_rows > hw.grid_height)
    config.fail_given({"mapping.layer_grid.rows", "hardware.grid_height"},
                      "a layer region of " + std::to_string(mapping.layer_rows) + " rows is taller than the " +
                          std::to_string(hw.grid_height) + "-tile " + hw.name + " wafer");
  return experiment;
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return experiment_from_config(load_experiment_config(path, overrides));
}

Experiment load_experiment_text(const std::string& yaml_text, const std::string& name,
                                const std::vector<std::string>& overrides) {
  return experiment_from_config(load_experiment_text_config(yaml_text, name, overrides));
}

namespace {

std::string gigabytes(uint64_t bytes) { return fmt::format("{:.2f} GB", double(bytes) / 1e9); }

// The plan keeps a program index and a parameter for every tile of every wafer:
// what grows with the wafer count, and what a plan of 1,000 WSE-3 wafers spends
// its 7 GB on. The programs themselves are shared and small.
uint64_t plan_table_bytes(const HardwareSpec& hw, uint32_t wafers) {
  const uint64_t per_tile =
      sizeof(decltype(ProgramSet::tile_program)::value_type) + sizeof(decltype(ProgramSet::tile_param)::value_type);
  return uint64_t(wafers) * hw.tiles_per_wafer() * per_tile;
}

[[noreturn]] void out_of_memory(const Experiment& experiment, const std::string& needed) {
  throw mapping::DoesNotFitError(fmt::format(
      "{} on {} wafer(s) of {}: {}, more than the {} this process can still take (MemAvailable, ulimit, cgroup)",
      experiment.model.name, experiment.hardware.wafers > 0 ? std::to_string(experiment.hardware.wafers) : "auto",
      experiment.hardware.name, needed, gigabytes(memory_available_bytes())));
}

// Bounds on the longest prompt (the same for every sequence) whose plan fits
// the experiment's fixed wafer count: `fits` does, `fails` does not; fits is 0
// when even a one-token prompt does not. The plan of a one-token prompt says
// how much context its tiles hold, a first guess (the layout changes with the
// context); bisection between the two bounds narrows it.
struct PromptBounds {
  uint64_t fits = 0, fails = 0;
};

PromptBounds longest_prompt_that_fits(const Experiment& experiment) {
  uint64_t compiles = 0;
  auto fits = [&](uint64_t prompt, uint64_t* max_context = nullptr) {
    ++compiles;
    workloads::WorkloadSpec workload = experiment.workload;
    workload.prompt_tokens = prompt;
    workload.prompt_lengths.clear();
    try {
      const mapping::Plan plan =
          mapping::compile_plan(experiment.hardware, experiment.model, workload, experiment.mapping);
      if (max_context) *max_context = plan.max_context_tokens;
      return true;
    } catch (const mapping::DoesNotFitError&) {
      return false;
    }
  };
  PromptBounds bounds{0, experiment.workload.prompt_tokens};
  uint64_t max_context = 0;
  const uint64_t decode = experiment.workload.decode_tokens;
  if (!fits(1, &max_context)) return bounds;
  bounds.fits = 1;
  if (max_context > decode + 1) {
    const uint64_t guess = std::min(max_context - decode, bounds.fails - 1);
    (fits(guess) ? bounds.fits : bounds.fails) = guess;
  }
  constexpr uint64_t kMaxCompiles = 14;  // a refusal should come in seconds, not minutes
  while (compiles < kMaxCompiles && bounds.fails - bounds.fits > 1) {
    const uint64_t middle = bounds.fits + (bounds.fails - bounds.fits) / 2;
    (fits(middle) ? bounds.fits : bounds.fails) = middle;
  }
  return bounds;
}

}  // namespace

Experiment experiment_with(const Experiment& experiment, const std::vector<std::string>& overrides) {
  // Values that name files resolve against the file that gave them; the
  // resolved text would resolve them against the working directory instead.
  std::vector<std::string> sets;
  for (const char* path : {"hardware.defects.map", "serving.trace_file"})
    if (!experiment.config.get_string(path).empty())
      sets.push_back(std::string(path) + "=" + config::yaml_scalar(experiment.config.file_path(path)));
  sets.insert(sets.end(), overrides.begin(), overrides.end());
  return load_experiment_text(experiment.config.to_yaml(), kWhatIfName, sets);
}

mapping::Plan compile_plan(const Experiment& experiment) {
  if (experiment.speculative) return compile_target_plan(experiment, speculative_rows(experiment));
  // A fixed wafer count sets the plan's size before anything is compiled.
  if (const uint32_t wafers = experiment.hardware.wafers; wafers > 0) {
    const uint64_t needed = plan_table_bytes(experiment.hardware, wafers);
    if (needed > memory_available_bytes())
      out_of_memory(experiment, "the plan's per-tile tables need " + gigabytes(needed));
  }
  try {
    return mapping::compile_plan(experiment.hardware, experiment.model, experiment.workload, experiment.mapping);
  } catch (const mapping::DoesNotFitError& error) {
    // On a fixed wafer count the user can shorten the prompt: say by how much.
    if (experiment.hardware.wafers == 0) throw;
    const PromptBounds bounds = longest_prompt_that_fits(experiment);
    if (bounds.fits == 0) throw;
    throw mapping::DoesNotFitError(fmt::format("{}; with {} decoded tokens a prompt of {} tokens fits, {} does not",
                                               error.what(), experiment.workload.decode_tokens, bounds.fits,
                                               bounds.fails));
  } catch (const std::bad_alloc&) {
    out_of_memory(experiment, "compiling the plan ran out of memory");
  }
}

}  // namespace wafersim
