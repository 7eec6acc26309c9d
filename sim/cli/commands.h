#pragma once
// Each `wafersim` subcommand lives in its own cmd_*.cpp and registers itself here.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/experiment/experiment.h"
#include "sim/reports/command_error.h"
#include "sim/reports/timeline_trace.h"

namespace wafersim::cli {

// The commands print and write what the reports library computes (sim/reports).
using namespace wafersim::reports;

// Flags shared by the commands that read an experiment.
struct CommonOptions {
  std::vector<std::string> sets;  // --set a.b.c=value, repeatable
  std::string json_path;          // --json FILE ("-" = stdout)
  bool quiet = false;             // --quiet: no progress, no table

  // Where the human-readable table goes: stdout, or stderr when the JSON goes
  // to stdout (--json -), so that stdout then holds exactly one JSON document.
  std::ostream& table_out() const { return json_path == "-" ? std::cerr : std::cout; }
};
void add_common_options(CLI::App& command, CommonOptions& options);

// An experiment file plus the common flags: run, analytic and map.
struct ExperimentOptions {
  std::string file;
  CommonOptions common;
};
void add_experiment_options(CLI::App& command, ExperimentOptions& options);

// --trace FILE and --trace-tokens A:B: run and analytic (docs/OBSERVABILITY.md).
struct TraceOptions {
  std::string path;  // empty: no trace
  TraceWindow window;
};
void add_trace_options(CLI::App& command, TraceOptions& options);

// A folder of output files: --csv DIR (run, analytic), --heatmaps DIR (run, map); docs/OBSERVABILITY.md.
void add_folder_option(CLI::App& command, const std::string& flag, std::string& folder, const std::string& description);

// A prefill whose chunk's buffers pass a tile's SRAM (mapping.prefill_chunk:
// as_asked takes the chunk as asked): its time stands, but no tile could hold
// that chunk, so one line on stderr says so beside the figures (run,
// analytic, serve).
void warn_if_prefill_overflows(uint64_t chunk_tokens, uint64_t sram_peak_bytes, uint64_t sram_bytes);

// A decode longer than the backend can count (CycleLimitError) is bad input:
// blames what the user wrote among the values that make it long.
[[noreturn]] void refuse_too_long(const Experiment& experiment, const std::string& why);

void add_validate_command(CLI::App& app);
void add_describe_command(CLI::App& app);
// `describe model NAME`, registered under the describe command.
void add_describe_model_subcommand(CLI::App& describe);
void add_run_command(CLI::App& app);
void add_analytic_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_map_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_sweep_point_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_parallelism_command(CLI::App& bench);  // `bench parallelism`, under `bench`
void add_serve_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace wafersim::cli
