#include "sim/cli/sweep/slurm.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>

#include "models/config/text.h"
#include "sim/cli/commands.h"
#include "sim/cli/sweep/program_output.h"
#include "sim/reports/exit_codes.h"
#include "sim/reports/output.h"

namespace wafersim::cli::sweep {

namespace {

std::string slurm_dir(const std::string& out_dir) { return out_dir + "/slurm"; }
std::string submissions_path(const std::string& out_dir) { return slurm_dir(out_dir) + "/submissions.txt"; }

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string first_line(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  return config::one_line(line.empty() ? text : line);
}

// "12_3" -> {3}; "12_[3-5,7%2]" -> {3, 4, 5, 7}; a job that is not an array task -> {}.
std::vector<size_t> task_indices(const std::string& id) {
  std::vector<size_t> indices;
  const size_t underscore = id.find('_');
  if (underscore == std::string::npos) return indices;
  std::string list = id.substr(underscore + 1);
  if (!list.empty() && list.front() == '[') list = list.substr(1, list.find(']') - 1);
  list = list.substr(0, list.find('%'));
  std::istringstream parts(list);
  for (std::string part; std::getline(parts, part, ',');) {
    try {
      const size_t dash = part.find('-');
      const size_t first = std::stoul(part.substr(0, dash));
      const size_t last = dash == std::string::npos ? first : std::stoul(part.substr(dash + 1));
      for (size_t i = first; i <= last && i - first < 1000000; ++i) indices.push_back(i);
    } catch (const std::exception&) {
      // Not an index list: nothing from this part.
    }
  }
  return indices;
}

// "<id>|<state>" lines (squeue -o '%i|%T', sacct -P -o JobID,State) -> state by task index.
std::map<size_t, std::string> parse_states(const std::string& text) {
  std::map<size_t, std::string> states;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string state = line.substr(bar + 1);
    state = state.substr(0, state.find_first_of(" |"));  // "CANCELLED by 0" -> "CANCELLED"
    for (size_t index : task_indices(line.substr(0, bar))) states[index] = state;
  }
  return states;
}

bool unknown_job(const ProgramOutput& output) {
  return output.exit_code != 0 && output.err.find("Invalid job id") != std::string::npos;
}

}  // namespace

bool is_unfinished_state(const std::string& state) {
  static const std::set<std::string> unfinished = {"PENDING",   "RUNNING",   "CONFIGURING",  "COMPLETING",
                                                   "REQUEUED",  "RESIZING",  "SUSPENDED",    "STOPPED",
                                                   "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"};
  return unfinished.count(state) > 0;
}

Submission submit_array(const std::string& out_dir, const std::vector<std::string>& hashes,
                        const SlurmOptions& options) {
  const std::string folder = slurm_dir(out_dir);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) throw CommandError(kExitBadInput, "cannot create " + folder + ": " + error.message());
  const size_t number = read_submissions(out_dir).size() + 1;
  const std::string name = fmt::format("{}/array-{}", folder, number);

  Submission submission;
  submission.list_file = name + ".points";
  submission.hashes = hashes;
  std::string list;
  for (const std::string& hash : hashes) list += hash + "\n";
  write_text_atomically(submission.list_file, list);
  const std::string script = name + ".sh";
  write_text_atomically(script,
                        "#!/bin/sh\n"
                        "# Array task i runs the point on line i+1 of the list (wafersim sweep --backend slurm).\n"
                        "exec " +
                            shell_quoted(wafersim_executable()) + " sweep-point " + shell_quoted(out_dir) + " --list " +
                            shell_quoted(submission.list_file) + "\n");
  ::chmod(script.c_str(), 0755);

  std::string array = fmt::format("--array=0-{}", hashes.size() - 1);
  if (options.max_parallel) array += fmt::format("%{}", options.max_parallel);
  std::vector<std::string> words = {
      "sbatch",     "--parsable",       "--job-name=wafersim-sweep", array, "--output=" + folder + "/%A_%a.log",
      "--ntasks=1", "--cpus-per-task=1"};
  if (!options.partition.empty()) words.push_back("--partition=" + options.partition);
  if (!options.time_limit.empty()) words.push_back("--time=" + options.time_limit);
  if (!options.memory.empty()) words.push_back("--mem=" + options.memory);
  words.insert(words.end(), options.extra_args.begin(), options.extra_args.end());
  words.push_back(script);
  const ProgramOutput output = run_program(words);
  if (output.exit_code == kExitNotStarted && output.err.empty())
    throw CommandError(kExitBadInput, "cannot run sbatch: is Slurm installed here (slurm-client)?");
  const std::string job_id = output.out.substr(0, output.out.find_first_of(";\n"));
  if (output.exit_code != 0 || job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos)
    throw CommandError(kExitBadInput,
                       "sbatch refused the array: " + first_line(output.err.empty() ? output.out : output.err));
  submission.job_id = job_id;
  append_text(submissions_path(out_dir), job_id + " " + submission.list_file + "\n");
  return submission;
}

std::vector<Submission> read_submissions(const std::string& out_dir) {
  std::vector<Submission> submissions;
  for (const std::string& line : read_lines(submissions_path(out_dir))) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    Submission submission;
    submission.job_id = line.substr(0, space);
    submission.list_file = line.substr(space + 1);
    submission.hashes = read_lines(submission.list_file);
    submissions.push_back(std::move(submission));
  }
  return submissions;
}

std::map<std::string, TaskState> task_states(const std::vector<Submission>& submissions) {
  std::map<std::string, TaskState> by_hash;
  for (const Submission& submission : submissions) {  // oldest first: a later task overrides
    ProgramOutput output = run_program({"squeue", "-h", "-r", "-t", "all", "-j", submission.job_id, "-o", "%i|%T"});
    if (output.exit_code != 0 || output.out.empty())
      output = run_program({"sacct", "-n", "-P", "-X", "-j", submission.job_id, "-o", "JobID,State"});
    if (output.exit_code != 0) continue;
    for (const auto& [index, state] : parse_states(output.out))
      if (index < submission.hashes.size())
        by_hash[submission.hashes[index]] = {state, fmt::format("{}_{}", submission.job_id, index)};
  }
  return by_hash;
}

size_t unfinished_tasks(const Submission& submission, size_t* running) {
  const ProgramOutput output = run_program({"squeue", "-h", "-r", "-j", submission.job_id, "-o", "%i|%T"});
  if (running) *running = 0;
  if (unknown_job(output)) return 0;
  if (output.exit_code != 0)
    throw CommandError(kExitBadInput, "cannot ask Slurm about job " + submission.job_id + ": " +
                                          first_line(output.exit_code == kExitNotStarted && output.err.empty()
                                                         ? std::string("squeue not found")
                                                         : output.err));
  size_t unfinished = 0;
  for (const auto& [index, state] : parse_states(output.out)) {
    if (!is_unfinished_state(state)) continue;
    ++unfinished;
    if (running && state == "RUNNING") ++*running;
  }
  return unfinished;
}

}  // namespace wafersim::cli::sweep
