#include "sim/cli/sweep/point_task.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include "sim/cli/commands.h"
#include "sim/reports/output.h"

namespace wafersim::cli::sweep {

namespace {

std::string plan_path(const std::string& out_dir) { return out_dir + "/plan.json"; }

// Holds an flock on a file for as long as it lives; `held()` is false when
// another process holds it.
class PointLock {
 public:
  explicit PointLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) throw CommandError(kExitBadInput, "cannot write " + path + ": " + std::strerror(errno));
    held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  }
  ~PointLock() { ::close(fd_); }
  PointLock(const PointLock&) = delete;
  PointLock& operator=(const PointLock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace

void write_plan_file(const std::string& out_dir, const SweepPlan& plan, const std::string& engine) {
  nlohmann::json points = nlohmann::json::array();
  for (const Point& point : plan.points)
    points.push_back({{"hash", point.hash}, {"cells", point.cells}, {"values", point.values}});
  const nlohmann::json document = {{"engine", engine}, {"columns", plan.columns}, {"points", points}};
  write_text_atomically(plan_path(out_dir), document.dump(1) + "\n");
}

FolderPlan read_plan_file(const std::string& out_dir) {
  const std::string path = plan_path(out_dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError(kExitBadInput, "cannot read " + path + ": is " + out_dir + " a sweep folder?");
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json document = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  FolderPlan folder;
  try {
    folder.engine = document.at("engine").get<std::string>();
    folder.plan.columns = document.at("columns").get<std::vector<std::string>>();
    for (const nlohmann::json& point : document.at("points"))
      folder.plan.points.push_back({point.at("cells").get<std::vector<std::string>>(),
                                    point.at("values").get<std::vector<nlohmann::json>>(), "",
                                    point.at("hash").get<std::string>()});
  } catch (const nlohmann::json::exception&) {
    throw CommandError(kExitBadInput, path + " is damaged; run the sweep again with --resume to rewrite it");
  }
  return folder;
}

Job point_job(const std::string& points_dir, const Point& point, const std::string& engine, const std::string& label) {
  const std::string base = points_dir + "/" + point.hash;
  const std::string json_path = base + ".result.tmp";
  const std::string command = engine == "sim" ? "run" : engine;  // the engine's wafersim command
  return {{command, base + ".yaml", "--json", json_path, "--quiet"}, json_path, base + ".stderr.tmp", label};
}

nlohmann::json write_point_record(const std::string& points_dir, const SweepPlan& plan, const Point& point,
                                  const std::string& engine, const PointOutcome& outcome) {
  nlohmann::json record = point_record(plan, point, engine, outcome);
  write_text_atomically(points_dir + "/" + point.hash + ".json", record.dump(2) + "\n");
  return record;
}

int run_point_task(const std::string& out_dir, const std::string& hash) {
  const FolderPlan folder = read_plan_file(out_dir);
  const Point* point = nullptr;
  for (const Point& candidate : folder.plan.points)
    if (candidate.hash == hash) point = &candidate;
  if (!point) throw CommandError(kExitBadInput, "no point " + hash + " in " + plan_path(out_dir));

  const std::string points_dir = out_dir + "/points";
  PointLock lock(points_dir + "/" + hash + ".lock");
  if (!lock.held()) {
    std::cout << "point " << hash << ": skipped, another process runs it now" << std::endl;
    return kExitOk;
  }
  const std::optional<nlohmann::json> before = read_point_record(points_dir + "/" + hash + ".json");
  if (before && (*before)["engine"] == folder.engine) {
    std::cout << "point " << hash << ": skipped, already finished (" << (*before)["status"].get<std::string>() << ")"
              << std::endl;
    return kExitOk;
  }
  RunnerOptions options;
  options.jobs = 1;
  options.total = 1;
  options.show_progress = false;
  const RunnerSummary summary =
      run_jobs({point_job(points_dir, *point, folder.engine, "point " + hash)}, options,
               [&](size_t, const PointOutcome& outcome) {
                 write_point_record(points_dir, folder.plan, *point, folder.engine, outcome);
                 std::cout << fmt::format("point {}: {} in {:.2f} s{}", hash, outcome.status, outcome.wall_seconds,
                                          outcome.error.empty() ? "" : " (" + outcome.error + ")")
                           << std::endl;
               });
  if (summary.interrupted) {
    std::cout << "point " << hash << ": stopped by a signal before it finished; it has no record" << std::endl;
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace wafersim::cli::sweep
