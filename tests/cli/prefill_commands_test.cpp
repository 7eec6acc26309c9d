// The prefill as a user sees it through `run` and `analytic`: its figures, time
// to first token, decode figures unchanged by it, and its bad input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kData = WAFERSIM_TEST_DATA;
const std::string kTinyDense = kData + "/experiments/tiny-dense.yaml";
const std::string kTinyMoe = kData + "/experiments/tiny-moe.yaml";

}  // namespace

TEST_CASE("run times the prefill before decode: chunks, time to first token, end-to-end throughput", "[cli][prefill]") {
  const json result = run_json({"run", kTinyDense, "--quiet", "--set", "workload.prompt_tokens=100", "--set",
                                "workload.prefill_chunk_tokens=16", "--set", "workload.batch=2"});
  const json& prefill = result["metrics"]["prefill"];
  CHECK(prefill["chunks"] == 2 * 7);     // ceil(100 / 16) per sequence
  CHECK(prefill["chunk_tokens"] == 15);  // ceil(100 / 7)
  CHECK(prefill["padded_tokens"] == 2 * 5);
  const double clock_ghz = result["experiment"]["clock_ghz"];
  const double prefill_us = prefill["cycles"].get<double>() / (clock_ghz * 1e3);
  CHECK(prefill["seconds"].get<double>() == Approx(prefill_us / 1e6));
  CHECK(prefill["tokens_per_second"].get<double>() == Approx(2 * 100 / (prefill_us / 1e6)));
  // Every sequence waits for the whole batch's prefill, then for its first token.
  const json& first_token = result["metrics"]["time_to_first_token_us"];
  CHECK(first_token["p50"].get<double>() > prefill_us);
  CHECK(first_token["max"].get<double>() >= first_token["mean"].get<double>());
  const double decode_us = result["metrics"]["total_cycles"].get<double>() / (clock_ghz * 1e3);
  CHECK(first_token["max"].get<double>() < prefill_us + decode_us);
  const double end_to_end = result["metrics"]["end_to_end_tokens_per_second"];
  CHECK(end_to_end < result["metrics"]["tokens_per_second"].get<double>());
  CHECK(end_to_end == Approx(result["metrics"]["tokens"].get<double>() /
                             ((prefill["cycles"].get<double>() + result["metrics"]["total_cycles"].get<double>()) /
                              (clock_ghz * 1e9))));
}

TEST_CASE("the prefill leaves the decode figures as they are without it", "[cli][prefill]") {
  const json with = run_json({"analytic", kTinyDense, "--quiet"});
  const json without = run_json({"analytic", kTinyDense, "--quiet", "--set", "workload.prefill=false"});
  CHECK_FALSE(without["metrics"].contains("prefill"));
  CHECK_FALSE(without["metrics"].contains("time_to_first_token_us"));
  REQUIRE(with["metrics"].contains("prefill"));
  for (const char* key : {"total_cycles", "cycles_per_token", "per_token_latency_us", "per_layer", "breakdown"})
    CHECK(with["metrics"][key] == without["metrics"][key]);
}

TEST_CASE("the prefill's steps are the closed form's whichever backend ran and grow with the chunk", "[cli][prefill]") {
  auto steps = [](const std::string& command, const std::string& chunk) {
    const json result = run_json({command, kTinyDense, "--quiet", "--set", "workload.prompt_tokens=96", "--set",
                                  "workload.prefill_chunk_tokens=" + chunk, "--set", "sim.contention=true"});
    std::map<std::string, uint64_t> cycles;  // "region/step" -> cycles
    for (const json& step : result["metrics"]["prefill"]["steps_per_region"])
      cycles[step["region"].get<std::string>() + "/" + step["step"].get<std::string>()] = step["cycles"];
    return cycles;
  };
  const auto analytic = steps("analytic", "16");
  REQUIRE(analytic.count("layer 0/qkv_proj"));
  CHECK(steps("run", "16") == analytic);
  const auto longer = steps("analytic", "48");
  CHECK(longer.at("layer 0/qkv_proj") > analytic.at("layer 0/qkv_proj"));
  CHECK(longer.at("layer 1/down_proj") > analytic.at("layer 1/down_proj"));
}

TEST_CASE("larger prefill chunks mean fewer chunks and more cycles per chunk", "[cli][prefill]") {
  // The chunks as asked: the tiny wafer's tiles would cut 64 tokens to 36 (tests/mapping/prefill_sram_test.cpp).
  auto prefill_with_chunk = [](const std::string& chunk) {
    return run_json({"analytic", kTinyDense, "--quiet", "--set", "workload.prompt_tokens=256", "--set",
                     "workload.prefill_chunk_tokens=" + chunk, "--set",
                     "mapping.prefill_chunk=as_asked"})["metrics"]["prefill"];
  };
  const json small = prefill_with_chunk("8"), large = prefill_with_chunk("64");
  CHECK(small["chunks"] == 32);
  CHECK(large["chunks"] == 4);
  // Both carry every prompt token through the same regions: neither is free.
  CHECK(small["cycles"].get<uint64_t>() != large["cycles"].get<uint64_t>());
  CHECK(small["cycles"].get<uint64_t>() > 0);
}

TEST_CASE("a prefill without a prompt is refused at the prompt's line", "[cli][prefill]") {
  const Outcome outcome = run_wafersim({"analytic", kTinyDense, "--quiet", "--set", "workload.prompt_tokens=0"});
  CHECK(outcome.exit_code == 2);
  CHECK(outcome.err.find("prefill") != std::string::npos);
  CHECK(outcome.err.find("prompt_tokens") != std::string::npos);
  const Outcome decode_only = run_wafersim(
      {"analytic", kTinyDense, "--quiet", "--set", "workload.prompt_tokens=0", "--set", "workload.prefill=false"});
  CHECK(decode_only.exit_code == 0);
}

TEST_CASE("a MoE model's prefill is timed, every expert taking a share of each chunk", "[cli][prefill]") {
  const json moe = run_json({"analytic", kTinyMoe, "--quiet"});
  REQUIRE(moe["metrics"].contains("prefill"));
  CHECK(moe["metrics"]["prefill"]["cycles"].get<uint64_t>() > 0);
  // More tokens per expert take longer: top-k of 4 instead of 2 doubles each expert's share.
  const json wider = run_json({"analytic", kTinyMoe, "--quiet", "--set", "model.moe.top_k=4"});
  CHECK(wider["metrics"]["prefill"]["cycles"].get<uint64_t>() > moe["metrics"]["prefill"]["cycles"].get<uint64_t>());
}

TEST_CASE("a prompt too long for a fixed wafer count names the longest that fits", "[cli][prefill]") {
  auto map_with_prompt = [](uint64_t prompt) {
    return run_wafersim({"map", kTinyDense, "--quiet", "--set", "hardware.wafers=1", "--set",
                         "model.max_positions=100000", "--set", "workload.prompt_tokens=" + std::to_string(prompt)});
  };
  const Outcome refused = map_with_prompt(30000);
  INFO(refused.err);
  REQUIRE(refused.exit_code == 3);
  CHECK(is_one_line(refused.err));
  const std::string marker = "a prompt of ";
  const size_t at = refused.err.find(marker);
  REQUIRE(at != std::string::npos);
  uint64_t fits = 0, fails = 0;
  REQUIRE(std::sscanf(refused.err.c_str() + at, "a prompt of %lu tokens fits, %lu does not", &fits, &fails) == 2);
  CHECK(fits < fails);
  // The figures are the compiler's: the first fits, the second does not.
  CHECK(map_with_prompt(fits).exit_code == 0);
  CHECK(map_with_prompt(fails).exit_code == 3);
}

TEST_CASE("a bad mapping.prefill_gemm is refused at its line, with no result file", "[cli][prefill]") {
  Scratch scratch;
  const std::string experiment = (scratch.path() / "exp.yaml").string();
  const std::string out = (scratch.path() / "result.json").string();
  std::ofstream(experiment) << "hardware: tiny\nmodel: tiny-dense\nworkload: {prompt_tokens: 100}\nmapping:\n"
                               "  prefill_gemm: cannon\n";
  const Outcome outcome = run_wafersim({"analytic", experiment, "--quiet", "--json", out});
  INFO(outcome.err);
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("exp.yaml:5:") != std::string::npos);
  CHECK(outcome.err.find("prefill_gemm") != std::string::npos);
  CHECK(!std::filesystem::exists(out));
  // Both values are accepted.
  for (const std::string gemm : {"meshgemm", "chunked_gemv"})
    CHECK(run_wafersim({"analytic", kTinyDense, "--quiet", "--set", "mapping.prefill_gemm=" + gemm}).exit_code == 0);
}

TEST_CASE("the prefill's last progress line says how far it simulated", "[cli][prefill]") {
  // The prefill runs in a child; the parent shows where it ended. progress_seconds 0:
  // that closing line is always printed, however fast the machine.
  Scratch scratch;
  const std::string result = (scratch.path() / "run.json").string();
  const Outcome outcome = run_wafersim(
      {"run", kTinyDense, "--json", result, "--set", "sim.progress_seconds=0", "--set", "workload.prompt_tokens=256"});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  std::string last;
  std::string line;
  std::istringstream lines(outcome.err);
  while (std::getline(lines, line, '\n'))
    for (size_t start = 0, end; start <= line.size(); start = end + 1) {
      end = std::min(line.find('\r', start), line.size());  // progress lines overwrite each other with \r
      const std::string part = line.substr(start, end - start);
      if (part.find("prefill chunks") != std::string::npos) last = part;
    }
  // Simulated time comes from cycles: the prefill's, as the result reports them (the
  // event rate, from wall time, is not checked); the chunks are the plan's, which
  // the tiles' SRAM may make more than the 2 of 128 tokens asked.
  std::ifstream in(result);
  const json run = json::parse(in);
  const uint64_t chunks = run["metrics"]["prefill"]["chunks"].get<uint64_t>();
  REQUIRE(chunks >= 2);
  REQUIRE_THAT(last, Catch::Contains(std::to_string(chunks) + "/" + std::to_string(chunks) + " prefill chunks"));
  char simulated[64];
  std::snprintf(simulated, sizeof simulated, " %.3f ms simulated",
                run["metrics"]["prefill"]["seconds"].get<double>() * 1e3);
  CHECK_THAT(last, Catch::Contains(simulated));
}

TEST_CASE("a prefill chunk the tiles cannot hold is timed with a warning, and a fitting choice has none",
          "[cli][prefill]") {
  // 64 tokens of the tiny wafer's chunks need more than a tile holds (36 fit).
  auto analytic = [](const std::string& choice) {
    return run_wafersim({"analytic", kTinyDense, "--set", "workload.prompt_tokens=256", "--set",
                         "workload.prefill_chunk_tokens=64", "--set", "mapping.prefill_chunk=" + choice});
  };
  const Outcome as_asked = analytic("as_asked");
  REQUIRE(as_asked.exit_code == 0);
  CHECK(as_asked.err.find("warning: the prefill's 64-token chunks need ") != std::string::npos);
  CHECK(as_asked.out.find("prefill SRAM per tile, peak") != std::string::npos);
  for (const char* choice : {"largest_fitting", "fastest_fitting"}) {
    const Outcome fitting = analytic(choice);
    INFO(choice);
    REQUIRE(fitting.exit_code == 0);
    CHECK(fitting.err.find("warning") == std::string::npos);
  }
  const json chosen = run_json({"analytic", kTinyDense, "--quiet", "--set", "workload.prompt_tokens=256", "--set",
                                "workload.prefill_chunk_tokens=64", "--set",
                                "mapping.prefill_chunk=fastest_fitting"})["metrics"]["prefill"];
  CHECK(chosen["chunk_tokens"].get<uint64_t>() <= 36);
  CHECK(chosen["sram_peak_bytes"].get<uint64_t>() <= 48u * 1024);
}
