#include <iostream>

#include "models/config/schema.h"
#include "models/config/text.h"
#include "models/config/value_text.h"
#include "models/gpu.h"
#include "models/hardware.h"
#include "sim/backend/backend.h"
#include "sim/cli/commands.h"
#include "sim/experiment/experiment.h"
#include "sim/reports/config_json.h"
#include "sim/reports/metric_table.h"
#include "sim/reports/output.h"
#include "sim/reports/serving_metric_table.h"

namespace wafersim::cli {

namespace {

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& preset : embedded_hardware_presets()) names.push_back(preset.name);
  return names;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// With --json FILE|-, each describe command writes its document instead of its table.
void add_json_option(CLI::App& command, std::string& json_path, const std::string& what) {
  command.add_option("--json", json_path, "Write " + what + " as JSON to FILE ('-' = stdout) instead of the table")
      ->check([](const std::string& path) {
        return path.empty() ? std::string("needs a file name, got an empty one") : "";
      });
}

// The GPU presets `compare --against` takes: not wafers, so a table of their own.
nlohmann::json gpu_presets_json() {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuSpec& gpu : gpu_presets())
    gpus.push_back({{"name", gpu.name},
                    {"part", gpu.part},
                    {"hbm_bytes", gpu.hbm_bytes},
                    {"hbm_bytes_per_s", gpu.hbm_bytes_per_s},
                    {"bf16_flops_per_s", gpu.bf16_flops_per_s},
                    {"fp8_flops_per_s", gpu.fp8_flops_per_s},
                    {"fp4_flops_per_s", gpu.fp4_flops_per_s},
                    {"nvlink_bytes_per_s", gpu.nvlink_bytes_per_s},
                    {"tdp_watts", gpu.tdp_watts},
                    {"source", gpu.source}});
  return gpus;
}

std::string gpu_presets_table() {
  Table table({{"GPU preset", "", false},
               {"HBM", "GB", true},
               {"HBM", "TB/s", true},
               {"bf16", "TFLOPS", true},
               {"fp8", "TFLOPS", true},
               {"fp4", "TFLOPS", true},
               {"NVLink", "GB/s", true},
               {"TDP", "W", true},
               {"part", "", false}});
  // A format without tensor-core support (0) runs at the next wider one: shown as a dash.
  auto tflops = [](double flops_per_s) { return flops_per_s > 0 ? fixed(flops_per_s / 1e12, 0) : "—"; };
  for (const GpuSpec& gpu : gpu_presets())
    table.add_row({gpu.name, fixed(gpu.hbm_bytes / 1e9, 0), fixed(gpu.hbm_bytes_per_s / 1e12, 2),
                   tflops(gpu.bf16_flops_per_s), tflops(gpu.fp8_flops_per_s), tflops(gpu.fp4_flops_per_s),
                   fixed(gpu.nvlink_bytes_per_s / 1e9, 0), fixed(gpu.tdp_watts, 0), gpu.part});
  return table.str();
}

void list_presets(const std::string& json_path) {
  if (!json_path.empty()) {
    nlohmann::json presets = nlohmann::json::array();
    for (const EmbeddedFile& preset : embedded_hardware_presets()) {
      const HardwareSpec hw = hardware_from_config(load_hardware_config(preset.name, {}, preset.path));
      presets.push_back({{"name", preset.name},
                         {"grid_width", hw.grid_width},
                         {"grid_height", hw.grid_height},
                         {"tiles", hw.tiles_per_wafer()},
                         {"sram_bytes_per_tile", hw.tile.sram_bytes},
                         {"clock_ghz", hw.clock_ghz},
                         {"file", preset.path}});
    }
    write_json(json_path, {{"presets", presets}, {"gpu_presets", gpu_presets_json()}});
    return;
  }
  Table table({{"preset", "", false},
               {"grid", "tiles", true},
               {"tiles", "", true},
               {"SRAM/tile", "bytes", true},
               {"SRAM/wafer", "GiB", true},
               {"clock", "GHz", true},
               {"file", "", false}});
  for (const EmbeddedFile& preset : embedded_hardware_presets()) {
    const HardwareSpec hw = hardware_from_config(load_hardware_config(preset.name, {}, preset.path));
    table.add_row({preset.name, std::to_string(hw.grid_width) + " x " + std::to_string(hw.grid_height),
                   std::to_string(hw.tiles_per_wafer()), std::to_string(hw.tile.sram_bytes),
                   fixed(double(hw.tiles_per_wafer() * hw.tile.sram_bytes) / double(1ull << 30), 2),
                   config::format_number(hw.clock_ghz), preset.path});
  }
  std::cout << table.str() << "\nGPU presets of `wafersim compare --against NAMExN` (a closed-form reference, not "
            << "simulated; docs/GPU_REFERENCE.md):\n"
            << gpu_presets_table();
}

void show_preset(const std::string& name, const std::string& json_path) {
  const EmbeddedFile* preset = find_embedded(embedded_hardware_presets(), name);
  if (!preset)
    throw CommandError(kExitBadInput, "unknown hardware preset " + config::quoted(name) +
                                          " (known: " + config::join(preset_names()) + ")" +
                                          config::did_you_mean(name, preset_names()));
  const config::Config config = load_hardware_config(name, {}, preset->path);
  const HardwareSpec hw = hardware_from_config(config);
  if (!json_path.empty()) {
    write_json(json_path, {{"preset", name},
                           {"file", preset->path},
                           {"tiles", hw.tiles_per_wafer()},
                           {"usable_sram_bytes_per_tile", hw.usable_sram_bytes()},
                           {"config", config_json(config)}});
    return;
  }
  std::cout << name << " (" << preset->path << "): " << hw.grid_width << " x " << hw.grid_height << " = "
            << hw.tiles_per_wafer() << " tiles, " << hw.usable_sram_bytes() << " of " << hw.tile.sram_bytes
            << " bytes SRAM usable per tile, clock " << config::format_number(hw.clock_ghz) << " GHz\n\n";
  Table table({{"parameter", "", false}, {"value", "", true}, {"unit", "", false}});
  for (const config::ParamSpec& spec : hardware_schema().params())
    table.add_row({spec.path, config::value_text(config.entries().at(spec.path).value), spec.unit});
  std::cout << table.str();
}

void show_params(const std::string& prefix, const std::string& json_path) {
  const std::string text = config::describe_params(experiment_schema(), prefix);
  if (text.empty()) {
    std::vector<std::string> paths;
    for (const config::ParamSpec& spec : experiment_schema().params()) paths.push_back(spec.path);
    throw CommandError(kExitBadInput,
                       "no parameter path starts with " + config::quoted(prefix) + config::did_you_mean(prefix, paths));
  }
  if (json_path.empty()) {
    std::cout << text;
    return;
  }
  nlohmann::json params = nlohmann::json::array();
  for (const config::ParamSpec& spec : experiment_schema().params()) {
    if (spec.path.compare(0, prefix.size(), prefix) != 0) continue;
    params.push_back({{"path", spec.path},
                      {"type", config::to_string(spec.type)},
                      {"unit", spec.unit},
                      {"default", spec.default_value ? nlohmann::json(*spec.default_value) : nlohmann::json()},
                      {"allowed", config::range_description(spec)},
                      {"description", spec.description}});
  }
  write_json(json_path, {{"params", params}});
}

std::string flag_names(unsigned flags) {
  std::vector<std::string> names;
  if (flags & kGolden) names.push_back("golden");
  if (flags & kSweepDefault) names.push_back("sweep default");
  if (flags & kMeasuredOnly) names.push_back("engine only");
  if (flags & kMachineDependent) names.push_back("machine-dependent");
  if (flags & kSetup) names.push_back("setup");
  if (flags & kSpeculative) names.push_back("speculative only");
  if (flags & kMoe) names.push_back("MoE only");
  if (flags & kDefects) names.push_back("defects only");
  return config::join(names);
}

// serve's figures: a class figure at serving.<path> and serving.classes.<class>.<path>.
nlohmann::json serving_figures_json() {
  nlohmann::json figures = nlohmann::json::array();
  for (const ClassFigure& figure : serving_class_table())
    figures.push_back({{"path", "serving." + figure.path},
                       {"unit", figure.unit},
                       {"description", figure.description},
                       {"per_class", true},
                       {"sweep_default", bool(figure.flags & kSweepDefault)},
                       {"table_row", figure.row ? figure.row->label : ""}});
  for (const RunFigure& figure : serving_run_table())
    figures.push_back({{"path", figure.path},
                       {"unit", figure.unit},
                       {"description", figure.description},
                       {"per_class", false},
                       {"sweep_default", false},
                       {"table_row", ""}});
  return figures;
}

void show_metrics(const std::string& json_path) {
  if (!json_path.empty()) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const Metric& metric : decode_metric_table())
      metrics.push_back({{"path", metric.path},
                         {"unit", metric.unit},
                         {"description", metric.description},
                         {"golden", bool(metric.flags & kGolden)},
                         {"sweep_default", bool(metric.flags & kSweepDefault)},
                         {"machine_dependent", bool(metric.flags & kMachineDependent)},
                         {"engine_only", bool(metric.flags & kMeasuredOnly)},
                         {"table_row", metric.row ? metric.row->label : ""}});
    write_json(json_path, {{"metrics", metrics}, {"serving_metrics", serving_figures_json()}});
    return;
  }
  Table table({{"metric", "", false}, {"unit", "", false}, {"uses", "", false}, {"description", "", false}});
  for (const Metric& metric : decode_metric_table())
    table.add_row({metric.path, metric.unit, flag_names(metric.flags), metric.description});
  std::cout << "Figures of `wafersim run` and `wafersim analytic` (JSON paths; docs/METRICS.md defines them):\n"
            << table.str();
  Table serving({{"metric", "", false}, {"unit", "", false}, {"description", "", false}});
  for (const ClassFigure& figure : serving_class_table())
    serving.add_row({"serving." + figure.path, figure.unit, figure.description});
  for (const RunFigure& figure : serving_run_table()) serving.add_row({figure.path, figure.unit, figure.description});
  std::cout << "\nFigures of `wafersim serve` (JSON paths; each serving.* figure of a request class is also at "
               "serving.classes.<class>.*; docs/SERVING.md defines them):\n"
            << serving.str();
}

void list_backends(const std::string& json_path) {
  if (!json_path.empty()) {
    nlohmann::json backends = nlohmann::json::array();
    for (const std::string& name : backend::backend_names())
      backends.push_back({{"name", name}, {"description", backend::backend_description(name)}});
    write_json(json_path, {{"backends", backends}});
    return;
  }
  Table table({{"backend", "", false}, {"what it is", "", false}});
  for (const std::string& name : backend::backend_names()) table.add_row({name, backend::backend_description(name)});
  std::cout << table.str();
}

}  // namespace

void add_describe_command(CLI::App& app) {
  CLI::App* describe = app.add_subcommand("describe", "Describe hardware presets, models and every parameter");
  describe->require_subcommand(1);

  auto hardware_name = std::make_shared<std::string>();
  auto hardware_json = std::make_shared<std::string>();
  CLI::App* hardware = describe->add_subcommand("hardware", "List hardware presets, or show one preset's parameters");
  hardware->add_option("NAME", *hardware_name, "Preset name (wse3, wse2, tiny)");
  add_json_option(*hardware, *hardware_json, "the presets, or the preset's parameters");
  hardware->callback([hardware_name, hardware_json] {
    hardware_name->empty() ? list_presets(*hardware_json) : show_preset(*hardware_name, *hardware_json);
  });

  auto prefix = std::make_shared<std::string>();
  auto params_json = std::make_shared<std::string>();
  CLI::App* params = describe->add_subcommand("params", "Every parameter: type, unit, default, range, description");
  params->add_option("PREFIX", *prefix, "Only parameters whose path starts with this (e.g. hardware.fabric)");
  add_json_option(*params, *params_json, "the parameters");
  params->callback([prefix, params_json] { show_params(*prefix, *params_json); });

  auto metrics_json = std::make_shared<std::string>();
  CLI::App* metrics =
      describe->add_subcommand("metrics", "Every figure run, analytic and serve report: JSON path, unit, meaning");
  add_json_option(*metrics, *metrics_json, "the list");
  metrics->callback([metrics_json] { show_metrics(*metrics_json); });

  auto backends_json = std::make_shared<std::string>();
  CLI::App* backends = describe->add_subcommand("backends", "The backends that evaluate a plan (serve --backend)");
  add_json_option(*backends, *backends_json, "the backends");
  backends->callback([backends_json] { list_backends(*backends_json); });

  add_describe_model_subcommand(*describe);
}

}  // namespace wafersim::cli
