// wafersim sweep-point DIR HASH | --list FILE: runs one point of a prepared
// sweep folder and writes its record, the way the local runner would. It is
// what a Slurm array task and each line of `sweep --emit-jobs` run; not meant
// to be typed, so it is left out of --help.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/cli/sweep/point_task.h"

namespace wafersim::cli {

namespace {

struct SweepPointOptions {
  std::string out_dir;
  std::string hash;
  std::string list_file;
};

// The hash on line SLURM_ARRAY_TASK_ID + 1 of the list.
std::string hash_of_array_task(const std::string& list_file) {
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (!task || !*task)
    throw CommandError(kExitBadInput, "--list needs SLURM_ARRAY_TASK_ID (set in a Slurm array task)");
  size_t index = 0;
  try {
    index = std::stoul(task);
  } catch (const std::exception&) {
    throw CommandError(kExitBadInput, std::string("SLURM_ARRAY_TASK_ID is not a number: ") + task);
  }
  std::ifstream in(list_file);
  if (!in) throw CommandError(kExitBadInput, "cannot read " + list_file);
  std::string line;
  for (size_t i = 0; i <= index; ++i)
    if (!std::getline(in, line))
      throw CommandError(kExitBadInput, list_file + " has no line " + std::to_string(index + 1) + " for task " + task);
  return line;
}

}  // namespace

void add_sweep_point_command(CLI::App& app) {
  auto options = std::make_shared<SweepPointOptions>();
  CLI::App* command = app.add_subcommand("sweep-point", "Run one point of a sweep folder (used by sweep backends)");
  command->group("");  // hidden
  command->add_option("DIR", options->out_dir, "Sweep folder")->required();
  command->add_option("HASH", options->hash, "The point's config_hash");
  command->add_option("--list", options->list_file, "File of hashes; runs line SLURM_ARRAY_TASK_ID + 1");
  command->callback([options] {
    if (options->hash.empty() == options->list_file.empty())
      throw CommandError(kExitBadInput, "sweep-point needs a point hash or --list FILE, not both");
    const std::string hash = options->hash.empty() ? hash_of_array_task(options->list_file) : options->hash;
    const int code = sweep::run_point_task(options->out_dir, hash);
    if (code != kExitOk) throw CommandError(code, "point " + hash + " stopped before it finished");
  });
}

}  // namespace wafersim::cli
