// The command-line shape: exit codes, help, version, validate and describe.
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

namespace {
const std::string kGood = std::string(WAFERSIM_TEST_DATA) + "/good/tiny.yaml";
const std::vector<std::string> kCommands = {"run",   "analytic", "compare",  "map",
                                            "sweep", "validate", "describe", "bench"};
}  // namespace

TEST_CASE("version flag prints the version and exits 0", "[cli]") {
  const Outcome outcome = run_wafersim({"--version"});
  CHECK(outcome.exit_code == 0);
  CHECK(std::regex_match(outcome.out, std::regex("wafersim [0-9]+\\.[0-9]+\\.[0-9]+\n")));
}

TEST_CASE("help flag works for the program and every command", "[cli]") {
  const Outcome top = run_wafersim({"--help"});
  CHECK(top.exit_code == 0);
  // It is an inference simulator, not a decode one: the help says what else it times.
  for (const char* phase : {"prefill", "decode", "serving"}) CHECK_THAT(top.out, Catch::Contains(phase));
  CHECK_THAT(run_wafersim({"run", "--help"}).out, Catch::Contains("time to first token"));
  for (const std::string& command : kCommands) {
    INFO(command);
    CHECK_THAT(top.out, Catch::Contains(command));
    const Outcome help = run_wafersim({command, "--help"});
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("Usage:"));
    CHECK(help.err.empty());
  }
}

TEST_CASE("an unknown command or option exits 2 with one line", "[cli]") {
  const Outcome unknown = run_wafersim({"valdate"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "error: unknown command 'valdate' (commands: run, analytic, compare, map, sweep, search, validate, describe, "
        "bench, serve, report); "
        "did you mean 'validate'?\n");
  const Outcome option = run_wafersim({"validate", kGood, "--no-such-flag"});
  CHECK(option.exit_code == 2);
  CHECK(is_one_line(option.err));
  const Outcome none = run_wafersim({});
  CHECK(none.exit_code == 2);
  CHECK(is_one_line(none.err));
}

// run, analytic, map and serve take the built-in default without one (decode_commands_test.cpp).
TEST_CASE("commands that need a file exit 2 without one", "[cli]") {
  for (const std::string command : {"sweep", "validate"}) {
    INFO(command);
    const Outcome outcome = run_wafersim({command});
    CHECK(outcome.exit_code == 2);
    CHECK(is_one_line(outcome.err));
  }
}

TEST_CASE("validate accepts the good file and reports its hash", "[cli][validate]") {
  const Outcome outcome = run_wafersim({"validate", kGood});
  CHECK(outcome.exit_code == 0);
  CHECK(std::regex_match(outcome.out,
                         std::regex(std::regex_replace(kGood, std::regex("[.^$|()\\[\\]{}*+?\\\\]"), "\\$&") +
                                    ": ok \\(config hash [0-9a-f]{16}\\)\n")));
  CHECK(outcome.err.empty());
  CHECK(run_wafersim({"validate", kGood, "--quiet"}).out.empty());
}

TEST_CASE("validate --print output is itself a valid experiment with the same hash", "[cli][validate]") {
  Scratch scratch;
  const Outcome printed = run_wafersim({"validate", kGood, "--print", "--set", "hardware.fabric.colors=16"});
  REQUIRE(printed.exit_code == 0);
  CHECK_THAT(printed.out, Catch::Contains("\n  fabric:\n") && Catch::Contains("    colors: 16\n"));
  CHECK_THAT(printed.out, Catch::Contains("hardware:\n  preset: tiny\n"));
  const std::string hash = printed.out.substr(printed.out.find("config hash ") + 12, 16);
  const std::string copy = scratch.write("resolved.yaml", printed.out);
  const Outcome again = run_wafersim({"validate", copy});
  CHECK(again.exit_code == 0);
  CHECK(again.out == copy + ": ok (config hash " + hash + ")\n");
}

TEST_CASE("validate --json writes a JSON file, or to stdout with '-'", "[cli][validate][json]") {
  Scratch scratch;
  const std::string path = (scratch.path() / "result.json").string();
  REQUIRE(run_wafersim({"validate", kGood, "--quiet", "--json", path}).exit_code == 0);
  const nlohmann::json written = nlohmann::json::parse(read_all(path));
  CHECK(written.at("valid") == true);
  CHECK(written.at("file") == kGood);
  // Only the result is left in the folder: no temporary file.
  CHECK(std::distance(std::filesystem::directory_iterator(scratch.path()), std::filesystem::directory_iterator()) == 1);

  const Outcome to_stdout = run_wafersim({"validate", kGood, "--quiet", "--json", "-"});
  CHECK(nlohmann::json::parse(to_stdout.out).at("config_hash") == written.at("config_hash"));

  const Outcome unwritable = run_wafersim({"validate", kGood, "--quiet", "--json", path + "/no/such/folder.json"});
  CHECK(unwritable.exit_code == 2);
  CHECK(is_one_line(unwritable.err));
}

TEST_CASE("describe hardware lists the presets; with a name, its parameters", "[cli][describe]") {
  const Outcome list = run_wafersim({"describe", "hardware"});
  CHECK(list.exit_code == 0);
  CHECK(std::regex_search(list.out, std::regex("\nwse3 +762 x 1176 +896112 +49152 ")));
  CHECK(std::regex_search(list.out, std::regex("\nwse2 +757 x 996 +753972 ")));
  CHECK(std::regex_search(list.out, std::regex("\ntiny +16 x 16 +256 ")));
  CHECK_THAT(list.out, Catch::Contains("clock (GHz)"));
  // The GPU presets of compare, apart from the wafers.
  CHECK(std::regex_search(list.out, std::regex("\nh100 +80 +3\\.35 +989 ")));
  CHECK_THAT(list.out, Catch::Contains("GPU presets of `wafersim compare --against NAMExN`"));

  const Outcome one = run_wafersim({"describe", "hardware", "wse2"});
  CHECK(one.exit_code == 0);
  CHECK(std::regex_search(one.out, std::regex("\nhardware.tile.fmac_per_cycle_16bit +4 +FMAC/cycle\n")));

  const Outcome unknown = run_wafersim({"describe", "hardware", "wse9"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "error: unknown hardware preset 'wse9' (known: tiny, wse2-sdk-clock, wse2, wse3-sdk-clock, wse3); did you mean "
        "'wse2'?\n");
}

TEST_CASE("describe params lists every parameter with unit and default", "[cli][describe]") {
  const Outcome all = run_wafersim({"describe", "params"});
  CHECK(all.exit_code == 0);
  CHECK_THAT(all.out,
             Catch::Contains("hardware.fabric.colors  (int, colors)\n    default: 24\n    allowed: [1, 32] colors\n"));
  CHECK_THAT(all.out, Catch::Contains("hardware.grid_width  (int, tiles)\n    default: required\n"));
  CHECK_THAT(all.out, Catch::Contains("workload.seed  (int)\n    default: 1\n"));
  CHECK(all.out.find("sim.seed") == std::string::npos);

  const Outcome fabric = run_wafersim({"describe", "params", "hardware.fabric"});
  CHECK(fabric.out.find("hardware.tile.") == std::string::npos);
  CHECK_THAT(fabric.out, Catch::Contains("hardware.fabric.hop_latency_cycles"));

  const Outcome none = run_wafersim({"describe", "params", "hardwar.tile"});
  CHECK(none.exit_code == 2);
  CHECK(is_one_line(none.err));
}

TEST_CASE("describe hardware/params/backends write JSON with --json FILE or -", "[cli][describe]") {
  auto document = [](const std::vector<std::string>& args) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--json", "-"});
    const Outcome outcome = run_wafersim(full);
    INFO(args[1] << ": " << outcome.err);
    REQUIRE(outcome.exit_code == 0);
    return nlohmann::json::parse(outcome.out);
  };
  const nlohmann::json presets = document({"describe", "hardware"})["presets"];
  REQUIRE(presets.size() == 5);  // tiny, wse2, wse3 and the two SDK-clock variants
  const nlohmann::json gpus = document({"describe", "hardware"})["gpu_presets"];
  REQUIRE(gpus.size() == 3);
  CHECK(gpus[0]["name"] == "h100");
  CHECK(gpus[0]["hbm_bytes"] == 80e9);
  CHECK(presets[0] == nlohmann::json({{"name", "tiny"},
                                      {"grid_width", 16},
                                      {"grid_height", 16},
                                      {"tiles", 256},
                                      {"sram_bytes_per_tile", 49152},
                                      {"clock_ghz", 1.1},
                                      {"file", "models/presets/tiny.yaml"}}));

  const nlohmann::json wse2 = document({"describe", "hardware", "wse2"});
  CHECK(wse2["preset"] == "wse2");
  CHECK(wse2["config"]["hardware"]["tile"]["fmac_per_cycle_16bit"] == 4);

  // One entry per parameter the table lists (each starts a line unindented).
  const std::string table = run_wafersim({"describe", "params"}).out;
  const std::regex entry("^[a-z]", std::regex::multiline);
  const auto table_entries = size_t(std::distance(std::sregex_iterator(table.begin(), table.end(), entry), {}));
  const nlohmann::json params = document({"describe", "params"})["params"];
  CHECK(params.size() == table_entries);
  const nlohmann::json fabric = document({"describe", "params", "hardware.fabric"})["params"];
  CHECK(fabric.size() < params.size());
  for (const nlohmann::json& param : fabric) {
    INFO(param.dump());
    CHECK(param["path"].get<std::string>().rfind("hardware.fabric.", 0) == 0);
    if (param["path"] == "hardware.fabric.colors")
      CHECK(param == nlohmann::json({{"path", "hardware.fabric.colors"},
                                     {"type", "int"},
                                     {"unit", "colors"},
                                     {"default", "24"},
                                     {"allowed", "[1, 32] colors"},
                                     {"description", param["description"]}}));
  }
  CHECK(document({"describe", "params", "hardware.grid_width"})["params"][0]["default"].is_null());

  const nlohmann::json backends = document({"describe", "backends"})["backends"];
  REQUIRE(backends.size() == 2);
  CHECK(backends[0]["name"] == "analytic");
  CHECK(backends[1]["name"] == "sim");

  // To a file, the document alone: nothing on stdout.
  Scratch scratch;
  const std::string path = (scratch.path() / "backends.json").string();
  const Outcome to_file = run_wafersim({"describe", "backends", "--json", path});
  CHECK(to_file.exit_code == 0);
  CHECK(to_file.out.empty());
  CHECK(nlohmann::json::parse(read_all(path))["backends"] == backends);
}

TEST_CASE("CONFIG '-' reads the experiment from standard input; errors name <stdin>:LINE:COL", "[cli][validate]") {
  const std::string binary = shell_quoted(WAFERSIM_BINARY);
  const Outcome from_file = run_wafersim({"validate", kGood, "--quiet", "--json", "-"});
  REQUIRE(from_file.exit_code == 0);
  const std::string hash = nlohmann::json::parse(from_file.out).at("config_hash");
  for (const std::string command : {"validate", "run", "analytic", "map"}) {
    INFO(command);
    const Outcome piped = run_shell(binary + " " + command + " - --quiet --json - < " + shell_quoted(kGood));
    INFO(piped.err);
    CHECK(piped.exit_code == 0);
    CHECK(nlohmann::json::parse(piped.out).at("config_hash") == hash);
  }
  const Outcome verdict = run_shell(binary + " validate - < " + shell_quoted(kGood));
  CHECK(verdict.out == "<stdin>: ok (config hash " + hash + ")\n");

  const Outcome bad = run_shell("printf 'hardware: tiny\\nmodel: tiny-dense\\nsim:\\n  contention: maybe\\n' | " +
                                binary + " analytic -");
  CHECK(bad.exit_code == 2);
  CHECK(is_one_line(bad.err));
  CHECK_THAT(bad.err, Catch::StartsWith("error: <stdin>:4:"));
}

TEST_CASE("paths given by --set are relative to the working directory, paths in a file to the file",
          "[cli][validate]") {
  Scratch scratch;
  const std::string model = read_all(std::string(WAFERSIM_SOURCE_DIR) + "/workloads/models/tiny-dense.yaml");
  std::filesystem::create_directories(scratch.path() / "sub");
  std::filesystem::create_directories(scratch.path() / "exps" / "models");
  scratch.write("sub/m.yaml", model);
  scratch.write("exps/models/m.yaml", model);
  scratch.write("exps/exp.yaml", "hardware: tiny\nmodel: models/m.yaml\n");
  const std::string in_scratch = "cd " + shell_quoted(scratch.path().string()) + " && " + shell_quoted(WAFERSIM_BINARY);
  const Outcome from_file = run_shell(in_scratch + " validate exps/exp.yaml");
  INFO(from_file.err);
  CHECK(from_file.exit_code == 0);
  const Outcome from_set = run_shell(in_scratch + " validate exps/exp.yaml --set model=sub/m.yaml");
  INFO(from_set.err);
  CHECK(from_set.exit_code == 0);
  // The experiment's folder is not searched for an override's path.
  const Outcome not_there = run_shell(in_scratch + " validate exps/exp.yaml --set model=models/m.yaml");
  CHECK(not_there.exit_code == 2);
  CHECK(not_there.err ==
        "error: --set model=models/m.yaml: model preset file models/m.yaml: cannot read: No such file or directory\n");
}

TEST_CASE("a byte-valued parameter takes a size with a unit", "[cli][config]") {
  auto sram_bytes = [](const std::string& value) {
    const Outcome outcome = run_wafersim({"validate", kGood, "--print", "--set", "hardware.tile.sram_bytes=" + value});
    INFO(outcome.err);
    REQUIRE(outcome.exit_code == 0);
    const std::smatch match = [&] {
      std::smatch m;
      std::regex_search(outcome.out, m, std::regex("\n    sram_bytes: ([0-9]+)\n"));
      return m;
    }();
    REQUIRE(match.size() == 2);
    return std::stoll(match[1]);
  };
  CHECK(sram_bytes("49152") == 49152);
  CHECK(sram_bytes("48KiB") == 49152);
  CHECK(sram_bytes("64kB") == 64000);
  CHECK(sram_bytes("1.5MiB") == 1572864);
  CHECK(sram_bytes("2 MB") == 2000000);
  CHECK(sram_bytes("1GB") == 1000000000);
  CHECK(sram_bytes("8000B") == 8000);

  Scratch scratch;
  const std::string file =
      scratch.write("exp.yaml", "hardware:\n  preset: tiny\n  tile: {sram_bytes: 64KiB}\nmodel: tiny-dense\n");
  CHECK(run_wafersim({"validate", file}).exit_code == 0);

  // Not whole bytes, an unknown unit, a quoted string, or a unit on a parameter that is not bytes.
  for (const char* bad : {"0.5B", "1.0001kB", "64kb", "64 parsecs", "\"64KiB\""}) {
    INFO(bad);
    const Outcome outcome = run_wafersim({"validate", kGood, "--set", std::string("hardware.tile.sram_bytes=") + bad});
    CHECK(outcome.exit_code == 2);
    CHECK(outcome.err.find("hardware.tile.sram_bytes expects an integer number of bytes or a size such as 48KiB") !=
          std::string::npos);
  }
  CHECK(run_wafersim({"validate", kGood, "--set", "hardware.fabric.colors=1kB"}).exit_code == 2);

  // KB is 1,000 or 1,024 bytes depending on who writes it: the writer must say which.
  const Outcome ambiguous = run_wafersim({"validate", kGood, "--set", "hardware.tile.sram_bytes=64KB"});
  CHECK(ambiguous.exit_code == 2);
  CHECK(is_one_line(ambiguous.err));
  CHECK(ambiguous.err.find("'64KB' is ambiguous: write '64kB' for powers of 1000 or '64KiB' for powers of 1024") !=
        std::string::npos);
}
