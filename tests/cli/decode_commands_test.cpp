// run, analytic and map as a user drives them: JSON keys, exact golden cycles,
// byte-stable results, and exit code 3 when a model does not fit.
#include <algorithm>
#include <filesystem>
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kSource = WAFERSIM_SOURCE_DIR;
const std::string kTinyDense = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-dense.yaml";

json::json_pointer json_pointer(std::string path) {
  std::replace(path.begin(), path.end(), '.', '/');
  return json::json_pointer("/" + path);
}

// The metric table as `describe metrics --json` lists it.
json declared_metrics() {
  const Outcome outcome = run_wafersim({"describe", "metrics", "--json", "-"});
  REQUIRE(outcome.exit_code == 0);
  return json::parse(outcome.out)["metrics"];
}

// Everything but the figures of the machine the run happened on.
json without_wall_figures(json document) {
  for (const json& metric : declared_metrics())
    if (metric["machine_dependent"].get<bool>()) {
      const json::json_pointer where = json_pointer(metric["path"].get<std::string>());
      document[where.parent_pointer()].erase(where.back());
    }
  return document;
}

}  // namespace

TEST_CASE("run reports every declared metric, and docs/METRICS.md defines each", "[cli][decode]") {
  const json result = run_json({"run", kTinyDense});
  const std::string documentation = read_all(kSource + "/docs/METRICS.md");
  const json declared = declared_metrics();
  CHECK(declared.size() >= 20);
  for (const json& metric : declared) {
    const std::string path = metric["path"];
    INFO(path);
    // metrics.steps* are analytic's alone, metrics.speculative.* speculative decoding's
    // (speculative_commands_test.cpp), metrics.moe.* MoE models' (below), metrics.defects.* defective
    // wafers' (defects_command_test.cpp).
    if (path != "metrics.steps" && path != "metrics.steps_per_region" && path.rfind("metrics.speculative.", 0) != 0 &&
        path.rfind("metrics.moe.", 0) != 0 && path.rfind("metrics.defects.", 0) != 0)
      CHECK(result.contains(json_pointer(path)));
    // Defined in the docs by its own path, or by its group's ("utilization.compute" for .mean and .peak).
    // A row of the definitions table names it, or names its group ("| `utilization.compute` |" for .mean and .peak).
    const std::string group = path.substr(0, path.rfind('.'));
    CHECK((documentation.find("`" + path + "`") != std::string::npos ||
           documentation.find("\n| `" + group + "` |") != std::string::npos));
  }
  for (const char* key : {"tokens_per_second", "tokens_per_second_per_user", "per_token_latency_us", "cycles_per_token",
                          "breakdown", "per_layer", "total_cycles", "tokens"})
    CHECK(result["metrics"].contains(key));
  for (const char* key : {"mean", "p50", "p99", "max"}) CHECK(result["metrics"]["per_token_latency_us"].contains(key));
  for (const char* key : {"compute", "fabric", "reduce", "offwafer", "contention"})
    CHECK(result["metrics"]["breakdown"].contains(key));
  for (const char* key : {"compute", "sram_capacity", "links"}) CHECK(result["utilization"].contains(key));
  for (const char* key : {"tiles_simulated", "events", "events_per_second", "wall_seconds", "peak_rss_bytes"})
    CHECK(result["sim"].contains(key));
  CHECK(result["sim"]["tiles_simulated"] == 256);  // every tile of the 16 x 16 wafer
  CHECK(result["metrics"]["tokens"] == 4);
  CHECK(result["config_hash"].get<std::string>().size() == 16);
  CHECK(result.contains("version"));
  // The breakdown is a split of the critical path.
  double sum = 0;
  for (const auto& [name, fraction] : result["metrics"]["breakdown"].items()) sum += fraction.get<double>();
  CHECK(sum == Approx(1.0));
}

TEST_CASE("analytic reports the same keys as run", "[cli][decode]") {
  const json simulated = run_json({"run", kTinyDense});
  const json analytic = run_json({"analytic", kTinyDense});
  for (const auto& [key, value] : simulated["metrics"].items()) CHECK(analytic["metrics"].contains(key));
  CHECK(analytic["engine"] == "analytic");
  CHECK(analytic["config_hash"] == simulated["config_hash"]);
}

TEST_CASE("the same experiment twice gives byte-identical results", "[cli][decode]") {
  const std::vector<std::string> args = {"run",   std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml",
                                         "--set", "sim.contention=true",
                                         "--set", "workload.batch=2"};
  CHECK(without_wall_figures(run_json(args)).dump() == without_wall_figures(run_json(args)).dump());
}

TEST_CASE("an MoE model's result and table give its experts' load; a dense model's neither", "[cli][decode][moe]") {
  const std::string moe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";
  const json result = run_json({"analytic", moe, "--set", "workload.batch=4"});
  const json& load = result["metrics"]["moe"];
  CHECK(load["expert_load_max"].get<double>() >= load["expert_load_mean"].get<double>());
  CHECK(load["expert_load_mean"].get<double>() >= 1.0);
  CHECK(load["idle_expert_fraction"].get<double>() >= 0.0);
  CHECK(load["idle_expert_fraction"].get<double>() < 1.0);
  const auto table = run_wafersim({"analytic", moe});
  CHECK_THAT(table.out, Catch::Contains("MoE: busiest expert"));
  CHECK_THAT(run_wafersim({"analytic", kTinyDense}).out, !Catch::Contains("MoE:"));
  CHECK(!run_json({"analytic", kTinyDense})["metrics"].contains("moe"));
}

TEST_CASE("golden results: exact cycles of a dozen configurations", "[cli][decode][golden]") {
  // Regenerate with scripts/update_golden.sh after a deliberate timing change.
  size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(WAFERSIM_TEST_DATA) + "/golden")) {
    const json golden = json::parse(read_all(entry.path()));
    INFO(entry.path().filename().string());
    std::vector<std::string> args = {"run", kSource + "/" + golden["experiment"].get<std::string>()};
    for (const auto& setting : golden["set"]) args.insert(args.end(), {"--set", setting.get<std::string>()});
    const json result = run_json(args);
    for (const auto& [path, expected] : golden["expected"].items()) {
      INFO(path);
      CHECK(result.value(json_pointer(path), json()) == expected);
    }
    ++checked;
  }
  CHECK(checked >= 12);
}

TEST_CASE("map reports the plan and exits 3 when the model does not fit", "[cli][map]") {
  const json plan = run_json({"map", kTinyDense});
  for (const char* key : {"fits", "wafers", "tiles_used", "tiles_total", "sram_peak_bytes", "sram_mean_bytes",
                          "max_context_tokens", "colors_peak", "relays", "regions"})
    CHECK(plan.contains(key));
  CHECK(plan["fits"] == true);
  CHECK(plan["regions"].size() == 4);        // embedding, two layers, LM head
  CHECK(plan["dataflow"] == "distributed");  // the default
  CHECK(plan["reduce_fanin"] == 2);
  CHECK_THAT(plan["slices"].get<std::string>(), Catch::Contains("root column"));
  CHECK(run_json({"map", kTinyDense, "--set", "mapping.dataflow=root"})["dataflow"] == "root");
  CHECK(plan["prefill_gemm"] == "chunked_gemv");  // the default
  CHECK(run_json({"map", kTinyDense, "--set", "mapping.prefill_gemm=chunked_gemv"})["prefill_gemm"] == "chunked_gemv");
  CHECK(plan["attention"] == "groups");  // the default
  CHECK(run_json({"map", kTinyDense, "--set", "mapping.attention=grid"})["attention"] == "grid");

  // tiny-moe needs two tiny wafers.
  const std::string moe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";
  const json refused = run_json({"map", moe, "--set", "hardware.wafers=1"}, 3);
  CHECK(refused["fits"] == false);
  CHECK_THAT(refused["error"].get<std::string>(), Catch::Contains("fits on 2 wafer(s)"));
  // mapping.moe_combine: auto follows the dataflow; the table names it for an MoE model.
  CHECK(run_json({"map", moe})["moe_combine"] == "columns");
  CHECK(run_json({"map", moe, "--set", "mapping.dataflow=root"})["moe_combine"] == "root");
  CHECK(run_json({"map", moe, "--set", "mapping.dataflow=root", "--set", "mapping.moe_combine=tree"})["moe_combine"] ==
        "tree");
  const Outcome table = run_wafersim({"map", moe, "--set", "mapping.moe_combine=root"});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("every result sent to the layer root"));
  CHECK_THAT(run_wafersim({"map", moe}).out,
             Catch::Contains("combined as slices along the columns of the expert places"));
  const Outcome columns_on_root =
      run_wafersim({"map", moe, "--set", "mapping.dataflow=root", "--set", "mapping.moe_combine=columns"});
  CHECK(columns_on_root.exit_code == 2);
  CHECK_THAT(columns_on_root.err, Catch::Contains("mapping.moe_combine") && Catch::Contains("distributed"));

  const Outcome outcome = run_wafersim({"run", moe, "--set", "hardware.wafers=1"});
  CHECK(outcome.exit_code == 3);
  CHECK(is_one_line(outcome.err));
  CHECK_THAT(outcome.err, Catch::Contains("tiny-moe needs"));
}

TEST_CASE("a preset section given with --set is replaced whole", "[cli][config]") {
  const json swapped = run_json({"analytic", kTinyDense, "--set", "model=tiny-moe"});
  const json moe = run_json({"analytic", std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml"});
  CHECK(swapped["experiment"]["model"] == "tiny-moe");
  CHECK(swapped["config_hash"] == moe["config_hash"]);  // the two files differ only in their model
  CHECK(swapped["metrics"]["total_cycles"] == moe["metrics"]["total_cycles"]);

  const Outcome unknown = run_wafersim({"analytic", kTinyDense, "--set", "model=no-such-model"});
  CHECK(unknown.exit_code == 2);
  CHECK(is_one_line(unknown.err));
  CHECK_THAT(unknown.err, Catch::Contains("unknown model preset 'no-such-model'"));
}

TEST_CASE("with --json -, stdout is exactly one JSON document and the table goes to stderr", "[cli][json]") {
  const std::string good = std::string(WAFERSIM_TEST_DATA) + "/good/tiny.yaml";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"run", kTinyDense},
                                                                                    {"analytic", kTinyDense},
                                                                                    {"map", kTinyDense},
                                                                                    {"validate", good},
                                                                                    {"validate", good, "--print"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--json", "-"});
    INFO(full[0] << " " << full.back());
    const Outcome outcome = run_wafersim(full);
    REQUIRE(outcome.exit_code == 0);
    CHECK(json::accept(outcome.out));
    CHECK_FALSE(outcome.err.empty());  // the table, for whoever watches the terminal
  }
  const Outcome quiet = run_wafersim({"analytic", kTinyDense, "--json", "-", "--quiet"});
  CHECK(json::accept(quiet.out));
  CHECK(quiet.err.empty());
}

TEST_CASE("run and analytic with --quiet and no output file warn that nothing shows the result", "[cli][decode]") {
  for (const char* command : {"analytic", "run"}) {
    INFO(command);
    const Outcome quiet = run_wafersim({command, kTinyDense, "--quiet"});
    CHECK(quiet.exit_code == 0);
    CHECK(quiet.out.empty());
    CHECK(is_one_line(quiet.err));
    CHECK_THAT(quiet.err, Catch::StartsWith("warning: --quiet without --json, --csv or --trace"));
    CHECK(run_wafersim({command, kTinyDense, "--quiet", "--json", "-"}).err.empty());
  }
}

TEST_CASE("analytic reports what it does not measure as null and as a dash in the table", "[cli][decode]") {
  const json analytic = run_json({"analytic", kTinyDense});
  for (const char* path :
       {"utilization.compute.mean", "utilization.compute.peak", "utilization.links.mean", "utilization.links.peak",
        "sim.tiles_simulated", "sim.events", "sim.link_hops", "sim.events_per_second"}) {
    INFO(path);
    REQUIRE(analytic.contains(json_pointer(path)));  // the key stays: run and analytic have the same keys
    CHECK(analytic[json_pointer(path)].is_null());
  }
  // What the analytic run does know stays a number.
  CHECK(analytic["utilization"]["sram_capacity"]["mean"].is_number());
  CHECK(analytic["sim"]["wall_seconds"].is_number());
  CHECK(analytic["metrics"]["cycles_per_token"].is_number());

  const Outcome table = run_wafersim({"analytic", kTinyDense});
  REQUIRE(table.exit_code == 0);
  CHECK(std::regex_search(table.out, std::regex("\ncompute utilisation, mean +— +%\n")));
  CHECK(std::regex_search(table.out, std::regex("\nevents +— +events\n")));
  CHECK_THAT(table.out, !Catch::Contains(" 0.00  %"));

  // The engine measures them: numbers, not null.
  const json simulated = run_json({"run", kTinyDense});
  CHECK(simulated["sim"]["events"].get<uint64_t>() > 0);
  CHECK(simulated["utilization"]["compute"]["mean"].is_number());
}

TEST_CASE("a sweep's CSV leaves a figure the backend did not measure empty", "[cli][sweep]") {
  Scratch scratch;
  const std::string sweep = scratch.write("sweep.yaml", "base: " + std::string(WAFERSIM_TEST_DATA) +
                                                            "/good/tiny.yaml\nengine: analytic\nmode: grid\naxes:\n"
                                                            "  workload.batch: [1, 2]\n"
                                                            "metrics: [metrics.cycles_per_token, sim.events]\n");
  const Outcome outcome = run_wafersim({"sweep", sweep, "--out", (scratch.path() / "out").string()});
  INFO(outcome.err);
  REQUIRE(outcome.exit_code == 0);
  CHECK_THAT(outcome.err, !Catch::Contains("no result has"));
  const std::string csv = read_all(scratch.path() / "out" / "results.csv");
  CHECK_THAT(csv, Catch::StartsWith("workload.batch,metrics.cycles_per_token,sim.events,status"));
  CHECK(std::regex_search(csv, std::regex("\n1,[0-9.]+,,ok,")));
  CHECK(std::regex_search(csv, std::regex("\n2,[0-9.]+,,ok,")));
}

TEST_CASE("map: a region without KV cache has an unbounded context, null in JSON, never a sentinel", "[cli][map]") {
  const json plan = run_json({"map", kTinyDense});
  size_t unbounded = 0, bounded = 0;
  for (const json& region : plan["regions"]) {
    INFO(region["name"]);
    const json& context = region.at("max_context_tokens");
    if (context.is_null())
      ++unbounded;
    else
      CHECK(context.get<uint64_t>() < (uint64_t(1) << 53));  // within reach of a JSON parser's double
    if (context.is_number()) ++bounded;
  }
  CHECK(unbounded == 2);  // embedding and LM head
  CHECK(bounded == 2);    // the two layers
  CHECK(plan["max_context_tokens"].is_number_unsigned());

  const Outcome table = run_wafersim({"map", kTinyDense});
  CHECK_THAT(table.out, Catch::Contains("max context (tokens)"));
  CHECK_THAT(table.out, Catch::Contains("unbounded"));
  CHECK_THAT(table.out, !Catch::Contains("18446744073709551615"));
}

TEST_CASE("without a file, run, analytic and map take the built-in default experiment, the quickstart's",
          "[cli][decode]") {
  const json quickstart = run_json({"map", kSource + "/workloads/experiments/quickstart.yaml"});
  const json built_in = run_json({"map"});
  CHECK(built_in["config_hash"] == quickstart["config_hash"]);
  // Overrides apply to it as to a file: a smaller model, a short decode in closed form.
  const json small = run_json({"analytic", "--set", "model=llama3.2-1b", "--set", "workload.decode_tokens=2", "--set",
                               "workload.prefill=false"});
  CHECK(small["experiment"]["model"] == "llama3.2-1b");
  CHECK(small["metrics"]["tokens"] == 2);
  // A bad override is refused as with a file, naming the override.
  const Outcome bad = run_wafersim({"analytic", "--set", "workload.bach=4"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--set workload.bach=4"));
}

TEST_CASE("map shows an MoE layer's expert blocks: their tiles cover the rows below the attention", "[cli][map][moe]") {
  const std::string moe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";
  const json plan = run_json({"map", moe, "--set", "model.moe.layers=[1]", "--set", "model.ffn_dim=512"});
  size_t moe_regions = 0;
  for (const json& region : plan["regions"]) {
    INFO(region["name"]);
    if (region["blocks"] == 1) {
      CHECK(!region.contains("expert_block_rows"));
      continue;
    }
    ++moe_regions;
    const uint64_t rows = region["expert_block_rows"], attention = region["attention_rows"];
    const uint64_t narrowest = region["expert_block_columns"][0], widest = region["expert_block_columns"][1];
    CHECK(rows >= 1);
    CHECK(attention >= 1);
    CHECK(narrowest <= widest);
    // The expert blocks' tiles and the attention rows' fill the region, up to the rows the block height leaves.
    const uint64_t tiles = region["tiles"], experts = region["blocks"].get<uint64_t>() - 1;
    CHECK(experts * rows * narrowest <= tiles);
    CHECK(experts * rows * widest >= tiles - tiles / 2);
  }
  CHECK(moe_regions == 1);
  CHECK_THAT(run_wafersim({"map", moe}).out, Catch::Contains("expert blocks"));
  CHECK_THAT(run_wafersim({"map", kTinyDense}).out, !Catch::Contains("expert blocks"));
}

TEST_CASE("run and analytic write the refused record map writes when the model does not fit", "[cli][decode]") {
  const std::string moe = std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml";
  const json from_map = run_json({"map", moe, "--set", "hardware.wafers=1"}, 3);
  for (const char* command : {"run", "analytic"}) {
    INFO(command);
    Scratch scratch;
    const std::string path = (scratch.path() / "result.json").string();
    const Outcome outcome = run_wafersim({command, moe, "--set", "hardware.wafers=1", "--json", path});
    CHECK(outcome.exit_code == 3);
    CHECK(is_one_line(outcome.err));
    CHECK_THAT(outcome.err, Catch::StartsWith("does not fit: tiny-moe needs"));
    const json refused = json::parse(read_all(path));
    CHECK(refused["fits"] == false);
    CHECK_THAT(refused["error"].get<std::string>(), Catch::Contains("fits on 2 wafer(s)"));
    CHECK(refused == from_map);  // one shape for every command
    CHECK(std::distance(std::filesystem::directory_iterator(scratch.path()), std::filesystem::directory_iterator()) ==
          1);

    const Outcome to_stdout = run_wafersim({command, moe, "--set", "hardware.wafers=1", "--json", "-"});
    CHECK(to_stdout.exit_code == 3);
    CHECK(json::parse(to_stdout.out) == from_map);
  }
  CHECK(run_json({"analytic", kTinyDense})["fits"] == true);
}

TEST_CASE("a run that fails for another reason leaves no JSON file, whole or partial", "[cli][decode]") {
  for (const char* command : {"run", "analytic", "map"}) {
    INFO(command);
    Scratch scratch;
    const std::string path = (scratch.path() / "result.json").string();
    const Outcome outcome = run_wafersim({command, kTinyDense, "--set", "workload.batch=0", "--json", path});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
    CHECK(std::filesystem::is_empty(scratch.path()));
  }
}

TEST_CASE("an override shows in the header and the JSON: the preset name and what was modified", "[cli][decode]") {
  const std::vector<std::string> args = {"analytic", kTinyDense, "--set", "hardware.fabric.hop_latency_cycles=2"};
  const Outcome outcome = run_wafersim(args);
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.out.rfind("tiny-dense on tiny (modified: hop_latency_cycles=2) (1 wafer(s))", 0) == 0);
  const json modified = run_json(args);
  CHECK(modified["experiment"]["hardware"] == "tiny (modified: hop_latency_cycles=2)");
  CHECK(modified["experiment"]["model"] == "tiny-dense");
  // Every parameter of the resolved configuration, nested by section.
  CHECK(modified["config"]["hardware"]["fabric"]["hop_latency_cycles"] == 2);
  CHECK(modified["config"]["workload"]["seed"] == 7);
  CHECK(modified["config"]["model"].contains("d_model"));

  const json plain = run_json({"analytic", kTinyDense});
  CHECK(plain["experiment"]["hardware"] == "tiny");
  CHECK(plain["config"]["hardware"]["fabric"]["hop_latency_cycles"] != 2);
  // A value set back to the preset's is no modification.
  const json same = run_json(
      {"analytic", kTinyDense, "--set",
       "hardware.fabric.hop_latency_cycles=" + plain["config"]["hardware"]["fabric"]["hop_latency_cycles"].dump()});
  CHECK(same["experiment"]["hardware"] == "tiny");

  const json map = run_json({"map", kTinyDense, "--set", "model.n_layers=1"});
  CHECK(map["model"] == "tiny-dense (modified: n_layers=1)");
  CHECK(map["config"]["model"]["n_layers"] == 1);
}

TEST_CASE("run's progress into a file is plain lines with an ETA, no carriage returns", "[cli][decode]") {
  // progress_seconds 0: the engine reports at its first check, so a line is due at once.
  const Outcome outcome = run_wafersim({"run", kTinyDense, "--set", "sim.progress_seconds=0"});
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.err.find('\r') == std::string::npos);
  CHECK(std::regex_search(outcome.err, std::regex("[0-9]+/4 tokens, .*, ETA ")));
  CHECK(outcome.err.find("\033[K") == std::string::npos);
}

TEST_CASE("analytic's progress on a long closed form is a plain line with an ETA", "[cli][decode]") {
  // An MoE decode is timed token by token; with progress_seconds 0 a line is due at the 256th.
  const Outcome outcome = run_wafersim({"analytic", std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml",
                                        "--set", "sim.progress_seconds=0", "--set", "workload.decode_tokens=600",
                                        "--set", "workload.prefill=false"});
  REQUIRE(outcome.exit_code == 0);
  CHECK(outcome.err.find('\r') == std::string::npos);
  CHECK(std::regex_search(outcome.err, std::regex("256/600 tokens in closed form, ETA ")));
  // A closed form over before progress_seconds (a day, however loaded the machine): no line.
  const Outcome quiet = run_wafersim({"analytic", std::string(WAFERSIM_TEST_DATA) + "/experiments/tiny-moe.yaml",
                                      "--set", "sim.progress_seconds=86400", "--set", "workload.decode_tokens=600",
                                      "--set", "workload.prefill=false"});
  CHECK(quiet.err.find("closed form") == std::string::npos);
}
