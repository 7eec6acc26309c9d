// wafersim search: find the best plan over mapping, hardware and workload
// knobs with the closed form (docs/SEARCH.md). The points run through the
// sweep's machinery (sim/cli/search/evaluator.h); the strategies choose them.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "models/config/text.h"
#include "sim/cli/commands.h"
#include "sim/cli/search/evaluator.h"
#include "sim/cli/search/ranking.h"
#include "sim/cli/search/search_space.h"
#include "sim/cli/search/strategies.h"
#include "sim/experiment/version.h"
#include "sim/reports/output.h"

namespace wafersim::cli {

namespace {

using namespace search;

struct SearchOptions {
  std::string file;
  std::vector<std::string> vary, constraints;
  std::string objective, pareto = "wafers", strategy = "coordinate";
  size_t points = 200;
  uint64_t seed = 1;
  unsigned jobs = 0;  // 0 = one per core
  std::string out;
  size_t verify = 0;
  bool resume = false;
  std::string backend = "local";
  sweep::SlurmOptions slurm;
  double point_timeout_seconds = 3600;
};

struct Parsed {
  std::vector<VaryAxis> axes;
  Ranking ranking;
};

Parsed parse(const SearchOptions& options) {
  Parsed parsed;
  for (const std::string& argument : options.vary) {
    parsed.axes.push_back(parse_vary(argument));
    for (size_t a = 0; a + 1 < parsed.axes.size(); ++a)
      if (parsed.axes[a].path == parsed.axes.back().path)
        throw CommandError(kExitBadInput, "--vary " + argument + ": " + parsed.axes[a].path +
                                              " is varied twice; give all its values in one --vary");
  }
  parsed.ranking.objective = objective_figure(options.objective);
  parsed.ranking.pareto = pareto_figure(options.pareto);
  if (parsed.ranking.pareto.name == parsed.ranking.objective.name)
    throw CommandError(kExitBadInput, "--pareto " + options.pareto +
                                          ": the front needs a second figure, not the objective (e.g. wafers)");
  for (const std::string& argument : options.constraints)
    parsed.ranking.constraints.push_back(parse_constraint(argument));
  const sweep::SlurmOptions& slurm = options.slurm;
  if (options.backend != "slurm" &&
      (!slurm.partition.empty() || !slurm.time_limit.empty() || !slurm.memory.empty() || !slurm.extra_args.empty()))
    throw CommandError(kExitBadInput, "--partition, --time, --mem and --sbatch-arg need --backend slurm");
  const std::vector<std::string>& strategies = strategy_names();
  if (std::find(strategies.begin(), strategies.end(), options.strategy) == strategies.end())
    throw CommandError(kExitBadInput, "--strategy " + options.strategy +
                                          ": unknown strategy (strategies: " + config::join(strategies) + ")" +
                                          config::did_you_mean(options.strategy, strategies));
  return parsed;
}

// The prefill costs as much again as the decode and changes no decode figure:
// it is left out unless something the search ranks is a prefill figure.
std::vector<std::pair<std::string, std::string>> fixed_values(const Parsed& parsed) {
  bool prefill = needs_prefill(parsed.ranking.objective.json_path) || needs_prefill(parsed.ranking.pareto.json_path);
  for (const Constraint& constraint : parsed.ranking.constraints) prefill |= needs_prefill(constraint.json_path);
  for (const VaryAxis& axis : parsed.axes) prefill |= axis.path == "workload" || axis.path == "workload.prefill";
  if (prefill) return {};
  return {{"workload.prefill", "false"}};
}

std::string folder_for(const SearchOptions& options) {
  if (options.out.empty()) throw CommandError(kExitBadInput, "-o needs a folder name, got an empty one");
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(options.out, error);
  if (!error && absolute == absolute.root_path())
    throw CommandError(kExitBadInput, "-o " + options.out + " is the file-system root; choose a folder for the search");
  // A Slurm task may start in another folder: it is given the search's by its absolute path.
  std::string folder =
      options.backend == "slurm" ? std::filesystem::absolute(options.out).lexically_normal().string() : options.out;
  if (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

std::string figure_text(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.6g}", value.get<double>()) : std::string("—");
}

// The values of `point` that differ from the default's.
std::string changes_text(const nlohmann::json& point, const nlohmann::json& base) {
  std::vector<std::string> parts;
  for (const auto& [path, value] : point["values"].items())
    if (value != base["values"][path])
      parts.push_back(path + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return config::join(parts);
}

// How many times better the best is than the default: best / default for a
// figure to raise, default / best for one to lower; null without both.
nlohmann::json gain(const nlohmann::json& best, const nlohmann::json& base, const Figure& objective) {
  if (!best["objective"].is_number() || !base["objective"].is_number() || !base["feasible"].get<bool>()) return nullptr;
  const double b = best["objective"].get<double>(), d = base["objective"].get<double>();
  if (b <= 0 || d <= 0) return nullptr;
  return objective.higher_is_better ? b / d : d / b;
}

// The best `count` feasible points, best first.
std::vector<const Evaluated*> leaders(const std::vector<Evaluated>& points, const Ranking& ranking, size_t count) {
  std::vector<const Evaluated*> feasible;
  for (const Evaluated& point : points)
    if (ranking.score(point)) feasible.push_back(&point);
  std::stable_sort(feasible.begin(), feasible.end(),
                   [&](const Evaluated* a, const Evaluated* b) { return *ranking.score(*a) > *ranking.score(*b); });
  if (feasible.size() > count) feasible.resize(count);
  return feasible;
}

nlohmann::json verify(const Evaluator& evaluator, const Ranking& ranking, size_t count) {
  nlohmann::json rows = nlohmann::json::array();
  if (count == 0) return rows;
  const std::vector<const Evaluated*> points = leaders(evaluator.evaluated(), ranking, count);
  const std::vector<nlohmann::json> records = evaluator.rerun(points, "sim");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::optional<double> closed = figure_value(points[i]->record["result"], ranking.objective.json_path);
    const std::optional<double> engine =
        figure_value(records[i].value("result", nlohmann::json()), ranking.objective.json_path);
    nlohmann::json difference = nullptr;
    if (closed && engine && *closed != 0) difference = *engine / *closed - 1;
    rows.push_back({{"config_hash", points[i]->point.hash},
                    {"status", records[i].value("status", "")},
                    {"error", records[i].value("error", "")},
                    {"closed_form", closed ? nlohmann::json(*closed) : nlohmann::json()},
                    {"engine", engine ? nlohmann::json(*engine) : nlohmann::json()},
                    {"difference", difference},
                    {"file", "verify/points/" + points[i]->point.hash + ".json"}});
  }
  return rows;
}

void print_summary(const nlohmann::json& document, const std::string& folder) {
  const std::string objective = document["objective"]["name"];
  const nlohmann::json& base = document["default"];
  const nlohmann::json& best = document["best"];
  std::cout << fmt::format(
      "search: {} points by {} ({} round(s){}), closed form, in {:.1f} s with {} job(s)\n",
      document["evaluated"].get<size_t>(), document["strategy"].get<std::string>(), document["rounds"].get<size_t>(),
      document["strategy"] == "coordinate" ? fmt::format(", {} pass(es)", document["passes"].get<size_t>())
                                           : std::string(),
      document["wall_seconds"].get<double>(), document["jobs"].get<unsigned>());
  std::cout << fmt::format("default: {} {}{}\n", objective, figure_text(base["objective"]),
                           base["feasible"].get<bool>()
                               ? ""
                               : " (not feasible: " + base["status"].get<std::string>() + " or outside a constraint)");
  if (best.is_null()) {
    std::cout << "best: no point is feasible (each failed, does not fit or breaks a constraint)\n";
  } else {
    const nlohmann::json& ratio = document["gain_over_default"];
    std::cout << fmt::format(
        "best:    {} {}{}: {}\n", objective, figure_text(best["objective"]),
        ratio.is_number()
            ? fmt::format(", {:.3f}x the default ({:+.1f} %)", ratio.get<double>(), (ratio.get<double>() - 1) * 100)
            : std::string(),
        best["config_hash"] == base["config_hash"] ? "the default itself" : changes_text(best, base));
  }
  std::cout << fmt::format("pareto front ({} against {}): {} point(s); the default is {}on it\n", objective,
                           document["pareto_against"]["name"].get<std::string>(), document["pareto"].size(),
                           document["default_on_front"].get<bool>() ? "" : "not ");
  for (const nlohmann::json& row : document["verify"])
    std::cout << fmt::format(
        "verify {}: engine {} against closed form {} ({}){}\n", row["config_hash"].get<std::string>(),
        figure_text(row["engine"]), figure_text(row["closed_form"]),
        row["difference"].is_number() ? fmt::format("{:+.2f} %", row["difference"].get<double>() * 100)
                                      : std::string("no figure"),
        row["status"] == "ok" ? "" : ": " + row["error"].get<std::string>());
  std::cout << "files: " << folder << "/{points.csv,pareto.csv,search.json,best.yaml}\n";
}

void run_search(const SearchOptions& options) {
  const Parsed parsed = parse(options);
  const Ranking& ranking = parsed.ranking;
  RunSettings settings;
  settings.folder = folder_for(options);
  settings.jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  settings.resume = options.resume;
  settings.backend = options.backend;
  settings.slurm = options.slurm;
  settings.point_timeout_seconds = options.point_timeout_seconds;
  const std::vector<std::pair<std::string, std::string>> fixed = fixed_values(parsed);
  Evaluator evaluator(options.file, parsed.axes, fixed, settings);
  evaluator.check_values();

  StrategyInput input;
  for (const VaryAxis& axis : parsed.axes) input.sizes.push_back(axis.values.size());
  input.budget = options.points;
  input.seed = options.seed;
  input.evaluated = [&] { return evaluator.evaluated().size(); };
  input.known = [&](const Choice& choice) {
    const auto& all = evaluator.evaluated();
    return std::any_of(all.begin(), all.end(), [&](const Evaluated& e) { return e.choice == choice; });
  };
  const auto start = std::chrono::steady_clock::now();
  const size_t passes = run_strategy(options.strategy, input, [&](const std::vector<Choice>& choices) {
    std::vector<std::optional<double>> scores;
    for (const Evaluated* point : evaluator.evaluate(choices)) scores.push_back(ranking.score(*point));
    return scores;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<std::string> columns;
  for (const VaryAxis& axis : parsed.axes) columns.push_back(axis.path);
  const std::vector<Evaluated>& all = evaluator.evaluated();
  const Evaluated& base = *evaluator.evaluate({Choice(parsed.axes.size(), kBaseValue)}).front();
  const Evaluated* best = ranking.best(all);
  const std::vector<const Evaluated*> front = ranking.pareto_front(all);

  nlohmann::json document = {{"experiment", options.file},
                             {"strategy", options.strategy},
                             {"engine", "analytic"},
                             {"objective",
                              {{"name", ranking.objective.name},
                               {"path", ranking.objective.json_path},
                               {"higher_is_better", ranking.objective.higher_is_better}}},
                             {"pareto_against",
                              {{"name", ranking.pareto.name},
                               {"path", ranking.pareto.json_path},
                               {"higher_is_better", ranking.pareto.higher_is_better}}},
                             {"constraints", options.constraints},
                             {"points_budget", options.points},
                             {"seed", options.seed},
                             {"evaluated", all.size()},
                             {"rounds", evaluator.rounds()},
                             {"passes", passes},
                             {"jobs", settings.jobs},
                             {"wall_seconds", seconds},
                             {"version", version()}};
  nlohmann::json vary = nlohmann::json::object(), fixed_json = nlohmann::json::object();
  for (const VaryAxis& axis : parsed.axes) vary[axis.path] = axis.values;
  for (const auto& [path, value] : fixed) fixed_json[path] = value;
  document["vary"] = vary;
  document["fixed"] = fixed_json;
  document["default"] = point_json(columns, base, ranking);
  document["best"] = best ? point_json(columns, *best, ranking) : nlohmann::json();
  document["gain_over_default"] = best ? gain(document["best"], document["default"], ranking.objective) : nullptr;
  document["pareto"] = nlohmann::json::array();
  for (const Evaluated* point : front) document["pareto"].push_back(point_json(columns, *point, ranking));
  document["default_on_front"] = std::find(front.begin(), front.end(), &base) != front.end();
  document["verify"] = verify(evaluator, ranking, options.verify);

  std::vector<const Evaluated*> listed;
  for (const Evaluated& point : all) listed.push_back(&point);
  write_text_atomically(settings.folder + "/points.csv", points_csv(columns, listed, ranking));
  write_text_atomically(settings.folder + "/pareto.csv", points_csv(columns, front, ranking));
  if (best) write_text_atomically(settings.folder + "/best.yaml", evaluator.experiment_yaml(best->choice));
  write_text_atomically(settings.folder + "/search.json", document.dump(2) + "\n");
  print_summary(document, settings.folder);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto options = std::make_shared<SearchOptions>();
  CLI::App* command = app.add_subcommand(
      "search", "Search mapping, hardware and workload knobs for the best plan by the closed form (docs/SEARCH.md)");
  command->add_option("EXPERIMENT", options->file, "Experiment YAML file to start from")->required();
  command
      ->add_option("--vary", options->vary,
                   "KEY=a,b,c | KEY=range:START:STOP[:STEP] | KEY=log2:START:STOP (repeatable; KEY a parameter or "
                   "section)")
      ->required();
  command->add_option("--objective", options->objective, "What to optimise: " + config::join(objective_names(), " | "))
      ->required();
  command->add_option("--constraint", options->constraints,
                      "KEY<=V or KEY>=V on a figure (ttft, wafers, ...) or a result path (repeatable)");
  command->add_option("--pareto", options->pareto, "Second figure of the Pareto front")->capture_default_str();
  command->add_option("--strategy", options->strategy, "grid | random | coordinate (coordinate descent)")
      ->capture_default_str();
  command->add_option("--points", options->points, "The most points evaluated, the default plan's included")
      ->capture_default_str()
      ->check(CLI::Range(size_t(2), size_t(100000)));
  command->add_option("--seed", options->seed, "Seed of --strategy random")->capture_default_str();
  command->add_option("--jobs", options->jobs, "Points run at once (default: one per core)")
      ->check(CLI::Range(1u, 1024u));
  command
      ->add_option("-o,--out", options->out, "Output folder: points/, points.csv, pareto.csv, best.yaml, search.json")
      ->required();
  command->add_option("--verify", options->verify, "Run the best N points again with the engine (sim) and compare")
      ->capture_default_str()
      ->check(CLI::Range(size_t(0), size_t(1000)));
  command->add_flag("--resume", options->resume, "Reuse the points already run in the output folder");
  command->add_option("--point-timeout", options->point_timeout_seconds, "Seconds a point may run (0 = no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  command->add_option("--backend", options->backend, "Where the points run: local or slurm (a job array per round)")
      ->check(CLI::IsMember({"local", "slurm"}));
  command->add_option("--partition", options->slurm.partition, "Slurm partition");
  command->add_option("--time", options->slurm.time_limit, "Slurm time limit per point");
  command->add_option("--mem", options->slurm.memory, "Slurm memory per point");
  command->add_option("--sbatch-arg", options->slurm.extra_args, "Extra sbatch argument (repeatable)")
      ->allow_extra_args(false);
  command->callback([options] { run_search(*options); });
}

}  // namespace wafersim::cli
