// What `serve` accepts as a trace file: a regular file only (a device or a
// FIFO would be read for ever or block), with or without a UTF-8 byte-order mark.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "run_wafersim.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kServing = std::string(WAFERSIM_TEST_DATA) + "/serving";
const std::string kTinyServe = kServing + "/tiny-serve.yaml";

Outcome serve_trace(const std::string& trace) {
  return run_wafersim({"serve", kTinyServe, "--quiet", "--json", "-", "--set", "serving.trace_file=" + trace});
}

}  // namespace

TEST_CASE("serve reads a CSV trace that starts with a byte-order mark", "[cli][serve][trace]") {
  Scratch scratch;
  std::ifstream plain_file(kServing + "/trace.csv", std::ios::binary);
  const std::string plain((std::istreambuf_iterator<char>(plain_file)), std::istreambuf_iterator<char>());
  const std::string marked = scratch.write("marked.csv", "\xEF\xBB\xBF" + plain);
  const Outcome with_mark = serve_trace(marked);
  INFO(with_mark.err);
  REQUIRE(with_mark.exit_code == 0);
  const Outcome without = serve_trace(kServing + "/trace.csv");
  REQUIRE(without.exit_code == 0);
  CHECK(json::parse(with_mark.out)["serving"] == json::parse(without.out)["serving"]);
}

TEST_CASE("serve refuses a trace that is not a regular file", "[cli][serve][trace]") {
  Scratch scratch;
  const std::filesystem::path zero = scratch.path() / "zero.csv";
  std::filesystem::create_symlink("/dev/zero", zero);
  const std::filesystem::path fifo = scratch.path() / "fifo.jsonl";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::filesystem::path& trace : {zero, fifo}) {
    INFO(trace);
    const Outcome outcome = serve_trace(trace.string());
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(trace.string()) && Catch::Contains("not a regular file"));
  }
}

TEST_CASE("serve refuses arrival times the serving clock cannot hold to the cycle", "[cli][serve][trace]") {
  Scratch scratch;
  const std::string header = "arrival_s,prompt_tokens,output_tokens,class\n0,16,4,realtime\n";
  for (const std::string arrival : {"1e20", "1e300", "864001"}) {
    INFO(arrival);
    const std::string trace = scratch.write("late.csv", header + arrival + ",16,4,realtime\n");
    const Outcome outcome = serve_trace(trace);
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::Contains(trace + ":3:") && Catch::Contains("past the 864000 s"));
  }
  // Ten days is still a trace.
  const Outcome last = serve_trace(scratch.write("last.csv", header + "864000,16,4,realtime\n"));
  INFO(last.err);
  CHECK(last.exit_code == 0);
}
