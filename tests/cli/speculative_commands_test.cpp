// Speculative decoding as a user sees it through `run`, `analytic`, `map` and
// `serve`: its figures against plain decoding and the closed form of the
// acceptance, determinism, agreement of the two backends, and its bad input.
#include <cmath>
#include <filesystem>
#include <tuple>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kData = WAFERSIM_TEST_DATA;
const std::string kSpeculative = kData + "/speculative/tiny-speculative.yaml";

json analytic(std::vector<std::string> sets) {
  std::vector<std::string> args = {"analytic", kSpeculative, "--quiet"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  return run_json(args);
}

double per_user(const json& result) { return result["metrics"]["tokens_per_second_per_user"]; }

}  // namespace

TEST_CASE("speculative decoding: acceptance 0 is slower than plain decoding, high acceptance faster",
          "[cli][speculative]") {
  // A target of four layers: with tiny-dense's two, whose layers hand slices on
  // to each other, the draft's own embedding and LM head cost about what
  // speculation saves the target, and neither direction is clear.
  const std::string layers = "model.n_layers=4";
  const json plain = analytic({"workload.speculative.draft_model=\"\"", layers});
  CHECK_FALSE(plain["metrics"].contains("speculative"));
  const json none = analytic({"workload.speculative.acceptance.rate=0", layers});
  const json high = analytic({"workload.speculative.acceptance.rate=0.95", layers});
  INFO("plain " << per_user(plain) << ", acceptance 0 " << per_user(none) << ", acceptance 0.95 " << per_user(high));
  CHECK(per_user(none) < per_user(plain));
  CHECK(per_user(high) > per_user(plain));
  // Acceptance 0: every step emits the target's one token, after k draft tokens.
  CHECK(none["metrics"]["speculative"]["tokens_per_step"] == 1.0);
  CHECK(none["metrics"]["speculative"]["steps"] == none["experiment"]["decode_tokens"]);
}

TEST_CASE("speculative decoding: fixed acceptance gives the closed form (1 - a^(k+1)) / (1 - a)",
          "[cli][speculative]") {
  for (const double rate : {0.3, 0.7, 0.9}) {
    for (const int k : {1, 3, 5}) {
      const json result = analytic({"workload.speculative.acceptance.rate=" + std::to_string(rate),
                                    "workload.speculative.draft_tokens=" + std::to_string(k)});
      const json& s = result["metrics"]["speculative"];
      const double expected = (1 - std::pow(rate, k + 1)) / (1 - rate);
      CHECK(s["tokens_per_step"].get<double>() == Approx(expected).epsilon(1e-12));
      // Effective speed: those tokens every step, a step being the draft's k tokens and one verify pass.
      const double clock_ghz = result["experiment"]["clock_ghz"];
      const double step_s = s["cycles_per_step"].get<double>() / (clock_ghz * 1e9);
      CHECK(s["cycles_per_step"] ==
            s["draft_cycles_per_step"].get<uint64_t>() + s["verify_cycles_per_step"].get<uint64_t>());
      CHECK(s["effective_tokens_per_second_per_user"].get<double>() == Approx(expected / step_s));
      // Steps until the running total of whole tokens, floor(steps x expected), reaches decode_tokens.
      const uint64_t decode_tokens = result["experiment"]["decode_tokens"];
      uint64_t steps = 0;
      while (uint64_t(std::floor(double(steps) * expected + 1e-9)) < decode_tokens) ++steps;
      CHECK(s["steps"] == steps);
      CHECK(result["metrics"]["total_cycles"] == steps * s["cycles_per_step"].get<uint64_t>());
    }
  }
}

TEST_CASE("speculative decoding: sampled acceptance is seeded, and its mean nears the closed form",
          "[cli][speculative]") {
  const std::vector<std::string> sampled = {"workload.speculative.acceptance.kind=sampled",
                                            "workload.decode_tokens=2000", "workload.prefill=false"};
  std::vector<std::string> args = {"analytic", kSpeculative, "--quiet"};
  for (const std::string& set : sampled) args.insert(args.end(), {"--set", set});
  const json first = run_json(args), again = run_json(args);
  CHECK(first["metrics"] == again["metrics"]);
  args.insert(args.end(), {"--set", "workload.speculative.acceptance.seed=2"});
  const json other = run_json(args);
  CHECK(other["metrics"]["per_token"] != first["metrics"]["per_token"]);
  // About 700 steps: the mean of the draws is within a few standard errors of the expectation.
  const double expected = (1 - std::pow(0.7, 4)) / (1 - 0.7);
  CHECK(first["metrics"]["speculative"]["tokens_per_step"].get<double>() == Approx(expected).epsilon(0.05));
}

TEST_CASE("speculative decoding: run with contention off and analytic agree to the cycle", "[cli][speculative]") {
  // Two sequences of different prompts: each verify pass attends to its own sequence's cache.
  // Grid attention sizes its score messages by the largest context, which the verify plans take from decode's.
  for (const auto& [kind, verify, attention] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"fixed", "pipelined", "groups"},
                                                                      {"sampled", "pipelined", "groups"},
                                                                      {"fixed", "chunk", "groups"},
                                                                      {"sampled", "chunk", "groups"},
                                                                      {"fixed", "pipelined", "grid"},
                                                                      {"fixed", "chunk", "grid"}}) {
    INFO(kind << ", " << verify << ", " << attention);
    const std::vector<std::string> sets = {"--set", "workload.speculative.acceptance.kind=" + kind,
                                           "--set", "workload.speculative.verify=" + verify,
                                           "--set", "mapping.attention=" + attention,
                                           "--set", "workload.batch=2",
                                           "--set", "workload.prompt_tokens=[16, 400]"};
    std::vector<std::string> run_args = {"run", kSpeculative, "--quiet"},
                             analytic_args = {"analytic", kSpeculative, "--quiet"};
    run_args.insert(run_args.end(), sets.begin(), sets.end());
    analytic_args.insert(analytic_args.end(), sets.begin(), sets.end());
    const json sim = run_json(run_args), closed = run_json(analytic_args);
    for (const char* key : {"draft_cycles_per_step", "verify_cycles_per_step", "steps", "tokens_per_step"})
      CHECK(sim["metrics"]["speculative"][key] == closed["metrics"]["speculative"][key]);
    CHECK(sim["metrics"]["total_cycles"] == closed["metrics"]["total_cycles"]);
    CHECK(sim["metrics"]["prefill"]["cycles"] == closed["metrics"]["prefill"]["cycles"]);
    CHECK(sim["metrics"]["time_to_first_token_us"] == closed["metrics"]["time_to_first_token_us"]);
  }
}

TEST_CASE("speculative decoding: map shows the draft's band beside the target's", "[cli][speculative]") {
  const json plan = run_json({"map", kSpeculative, "--quiet"});
  const json& s = plan["speculative"];
  CHECK(s["draft_model"] == "tiny-draft");
  CHECK(s["target_rows"].get<int>() + s["draft_rows"].get<int>() == 16);
  CHECK(s["draft_rows"].get<int>() >= 1);
  CHECK(s["draft_tiles_used"].get<int>() > 0);
  CHECK(s["draft_sram_peak_bytes"].get<int>() <= plan["sram_capacity_bytes"].get<int>());
  for (const json& region : s["draft_regions"]) CHECK(region["y"].get<int>() >= s["target_rows"].get<int>());
  for (const json& region : plan["regions"])
    CHECK(region["y"].get<int>() + region["height_tiles"].get<int>() <= s["target_rows"].get<int>());
}

TEST_CASE("speculative decoding: a draft model file given by --set is relative to the working directory",
          "[cli][speculative]") {
  // The experiment file names its draft relative to itself; --set names the same file relative to here.
  const std::string relative = std::filesystem::relative(kData + "/speculative/tiny-draft.yaml").string();
  REQUIRE(std::filesystem::path(relative).is_relative());
  const json named_by_file = analytic({});
  const json named_by_set = analytic({"workload.speculative.draft_model=" + relative});
  CHECK(named_by_set["metrics"]["speculative"]["draft_cycles_per_step"] ==
        named_by_file["metrics"]["speculative"]["draft_cycles_per_step"]);
}

TEST_CASE("speculative decoding: a draft of another vocabulary is bad input naming its line", "[cli][speculative]") {
  const Outcome outcome = run_wafersim({"analytic", kData + "/speculative/vocab-mismatch.yaml", "--quiet"});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("vocab-mismatch.yaml:8:") != std::string::npos);
  CHECK(outcome.err.find("vocabulary of 128256 tokens") != std::string::npos);
}

TEST_CASE("speculative decoding: k = 0 draft tokens is bad input naming its line", "[cli][speculative]") {
  const Outcome outcome = run_wafersim({"analytic", kData + "/speculative/bad-k.yaml", "--quiet"});
  CHECK(outcome.exit_code == 2);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("bad-k.yaml:9:") != std::string::npos);
  CHECK(outcome.err.find("draft_tokens") != std::string::npos);
}

TEST_CASE("speculative decoding: a draft that does not fit beside the target exits 3", "[cli][speculative]") {
  Scratch scratch;
  const std::string out = (scratch.path() / "result.json").string();
  const Outcome outcome =
      run_wafersim({"analytic", kData + "/speculative/does-not-fit.yaml", "--quiet", "--json", out});
  CHECK(outcome.exit_code == 3);
  CHECK(is_one_line(outcome.err));
  CHECK(outcome.err.find("does not fit beside the target") != std::string::npos);
  CHECK(json::parse(read_all(out))["fits"] == false);
}

TEST_CASE("speculative decoding in serve: TPOT follows the accepted tokens per step", "[cli][speculative][serve]") {
  const std::string serve = kData + "/serving/tiny-serve.yaml";
  // One request at a time, so that TPOT is the step time over the tokens a step emits.
  // No per-token transport overhead: it would hide the step times behind the stream writer's.
  const std::vector<std::string> quiet = {
      "--set", "serving.scheduler.max_batch=1",  "--set", "serving.background.requests=0",
      "--set", "serving.realtime.rate_per_s=20", "--set", "serving.transport.http.token_overhead_us=0"};
  auto serve_json = [&](std::vector<std::string> sets) {
    std::vector<std::string> args = {"serve", serve, "--quiet"};
    args.insert(args.end(), quiet.begin(), quiet.end());
    for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
    return run_json(args)["serving"];
  };
  const std::string draft = "workload.speculative.draft_model=" + kData + "/speculative/tiny-draft.yaml";
  const json plain = serve_json({});
  const json none = serve_json({draft, "workload.speculative.acceptance.rate=0"});
  const json high = serve_json({draft, "workload.speculative.acceptance.rate=0.9"});
  const double tpot_plain = plain["tpot_ms"]["mean"], tpot_none = none["tpot_ms"]["mean"],
               tpot_high = high["tpot_ms"]["mean"];
  INFO("TPOT plain " << tpot_plain << " ms, acceptance 0 " << tpot_none << " ms, acceptance 0.9 " << tpot_high);
  CHECK(tpot_none > tpot_plain);
  CHECK(tpot_high < tpot_plain);
  CHECK_FALSE(plain.contains("speculative"));
  CHECK(none["speculative"]["tokens_per_step"] == 1.0);
  // Fixed acceptance: the steps' mean tends to the closed form (each request's last step is cut short).
  const double expected = (1 - std::pow(0.9, 5)) / (1 - 0.9);
  CHECK(high["speculative"]["tokens_per_step"].get<double>() == Approx(expected).epsilon(0.1));
  CHECK(high["requests"]["completed"] == plain["requests"]["completed"]);
}
