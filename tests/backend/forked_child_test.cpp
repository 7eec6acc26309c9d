// A forked child runs beside its parent: the prefill's simulation goes on
// while the parent simulates the decode (sim/reports/decode_run.cpp), and a
// child the parent never waits for does not outlive it.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "sim/backend/child_process.h"

using namespace wafersim;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() / ("wafersim_forked_child_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return folder / name;
}

// Waits, a moment at a time, for `path` to exist; false after `seconds`
// (only a hang guard: the condition is what the test asserts).
bool appears(const std::filesystem::path& path, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

TEST_CASE("a forked child runs while its parent does its own work", "[backend][child]") {
  // The child finishes only once the parent has done something after starting
  // it: were the start to wait for the child, the child would give up.
  const auto signal_file = scratch("parent_went_on");
  std::filesystem::remove(signal_file);
  backend::ForkedChild child([&] {
    const bool saw = appears(signal_file, 600);
    return std::make_pair(std::string(saw ? "saw the parent" : "gave up"), 0);
  });
  std::ofstream(signal_file) << "on";
  const backend::ChildOutput output = child.wait();
  CHECK(output.text == "saw the parent");
  CHECK(output.exit_status == 0);
  std::filesystem::remove_all(signal_file.parent_path());
}

TEST_CASE("a forked child never waited for is killed and reaped", "[backend][child]") {
  const auto pid_file = scratch("child_pid");
  std::filesystem::remove(pid_file);
  pid_t child_pid = 0;
  {
    backend::ForkedChild child([&] {
      std::ofstream(pid_file.string() + ".part") << ::getpid();
      std::filesystem::rename(pid_file.string() + ".part", pid_file);
      for (;;) ::pause();  // simulates for ever
      return std::make_pair(std::string(), 0);
    });
    REQUIRE(appears(pid_file, 600));
    std::ifstream(pid_file) >> child_pid;
    REQUIRE(child_pid > 0);
    REQUIRE(::kill(child_pid, 0) == 0);  // alive
  }                                      // the parent's own work threw, say: the child goes with it
  errno = 0;
  CHECK(::kill(child_pid, 0) == -1);
  CHECK(errno == ESRCH);  // not even a zombie: reaped
  std::filesystem::remove_all(pid_file.parent_path());
}
