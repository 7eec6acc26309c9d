// Every class of bad input is one line naming file:line:col and the key.
#include <catch2/catch.hpp>

#include "tests/models/config_fixture.h"

using namespace wafersim::config;
using namespace wafersim::config::testing;

TEST_CASE("unknown keys and sections come with the closest valid name", "[config][errors]") {
  CHECK(load_error("chip:\n  width: 3\n  link:\n    hop: 2\n") ==
        "exp.yaml:4:5: unknown key 'hop' in chip.link; did you mean 'hop_cycles'?");
  CHECK(load_error("chip:\n  width: 3\n  xyzzy: 2\n") == "exp.yaml:3:3: unknown key 'xyzzy' in chip");
  CHECK(load_error("chp:\n  width: 3\n") == "exp.yaml:1:1: unknown section 'chp'; did you mean 'chip'?");
}

TEST_CASE("values of the wrong type name the expected type", "[config][errors]") {
  CHECK(load_error("chip: {width: wide}\n") == "exp.yaml:1:15: chip.width expects an integer, got 'wide'");
  CHECK(load_error("chip: {width: 2.5}\n") == "exp.yaml:1:15: chip.width expects an integer, got '2.5'");
  CHECK(load_error("chip: {width: \"3\"}\n") == "exp.yaml:1:15: chip.width expects an integer, got the string '3'");
  CHECK(load_error("chip: {width: 3, clock_ghz: fast}\n") ==
        "exp.yaml:1:29: chip.clock_ghz expects a number, got 'fast'");
  CHECK(load_error("chip: {width: 3, clock_ghz: .nan}\n") ==
        "exp.yaml:1:29: chip.clock_ghz expects a number, got '.nan'");
  CHECK(load_error("chip: {width: 3, count: some}\n") ==
        "exp.yaml:1:25: chip.count expects an integer or 'auto', got 'some'");
  CHECK(load_error("chip: {width: 3}\nrun: {fast: yes}\n") ==
        "exp.yaml:2:13: run.fast expects true or false, got 'yes'");
  CHECK(load_error("chip: {width: 3, link: {lanes: 2}}\n") ==
        "exp.yaml:1:32: chip.link.lanes expects a list of integers, got '2'");
  CHECK(load_error("chip: {width: 3, link: {lanes: [1, b]}}\n") ==
        "exp.yaml:1:36: chip.link.lanes[1] expects an integer, got 'b'");
}

TEST_CASE("a mapping where a value belongs, and a value where a mapping belongs", "[config][errors]") {
  CHECK(load_error("chip:\n  width:\n    value: 3\n") == "exp.yaml:3:5: chip.width expects an integer, got a mapping");
  CHECK(load_error("chip:\n  width: [3]\n") == "exp.yaml:2:10: chip.width expects an integer, got a list");
  CHECK(load_error("chip:\n  width: 3\n  link: 4\n") ==
        "exp.yaml:3:9: chip.link is a group of keys (hop_cycles, turn_cycles, lanes) and expects a mapping, got '4'");
  CHECK(load_error("chip:\n  width:\n") == "exp.yaml:2:3: chip.width has no value; expected an integer");
  CHECK(load_error("chip: {width: 3, ? [a] : 1}\n") == "exp.yaml:1:20: keys must be plain names, got a list in chip");
}

TEST_CASE("out-of-range values state the range and unit", "[config][errors]") {
  CHECK(load_error("chip: {width: 0}\n") ==
        "exp.yaml:1:15: chip.width = 0 tiles is out of range; allowed [1, 1000] tiles");
  CHECK(load_error("chip: {width: -4}\n") ==
        "exp.yaml:1:15: chip.width = -4 tiles is out of range; allowed [1, 1000] tiles");
  CHECK(load_error("chip: {width: 3, clock_ghz: 0}\n") ==
        "exp.yaml:1:29: chip.clock_ghz = 0 GHz is out of range; allowed [0.01, 10] GHz");
  CHECK(load_error("chip: {width: 3, link: {lanes: [1, 8]}}\n") ==
        "exp.yaml:1:32: chip.link.lanes = 8 lanes is out of range; allowed [0, 7] lanes");
  CHECK(load_error("chip: {width: 99999999999999999999}\n") ==
        "exp.yaml:1:15: chip.width expects an integer, got '99999999999999999999'");
}

TEST_CASE("a bad enum value lists the choices", "[config][errors]") {
  CHECK(load_error("chip: {width: 3}\nrun: {mode: exakt}\n") ==
        "exp.yaml:2:13: bad value 'exakt' for run.mode; choices: exact, approximate; did you mean 'exact'?");
}

TEST_CASE("a missing required value names its section and where it is", "[config][errors]") {
  CHECK(load_error("chip:\n  clock_ghz: 2\n") ==
        "exp.yaml:1:1: missing required value chip.width (no default) in section 'chip' starting here");
  CHECK(load_error("run: {fast: true}\n") ==
        "exp.yaml:1: missing required value chip.width: the experiment has no 'chip' section");
}

TEST_CASE("malformed YAML is located", "[config][errors][yaml]") {
  CHECK(load_error("chip: {width: 3\n") == "exp.yaml:2:1: malformed YAML: end of map flow not found");
  CHECK(load_error("run: {fast: true}\nchip: \"small\n") == "exp.yaml:2:13: malformed YAML: illegal EOF in scalar");
  CHECK(load_error("chip:\n  width: 3\n clock_ghz: 2\n") == "exp.yaml:3:2: malformed YAML: end of map not found");
  CHECK(load_error("chip: " + std::string(3000, '[') + "\n") == "exp.yaml:2:1: malformed YAML: nested too deeply");
}

TEST_CASE("tabs in indentation are refused even where yaml-cpp would accept them", "[config][errors][yaml]") {
  CHECK(load_error("chip:\n\twidth: 3\n") == "exp.yaml:2:1: tab character in indentation; YAML indents with spaces");
  CHECK(load_error("chip:\n  \twidth: 3\n") == "exp.yaml:2:3: tab character in indentation; YAML indents with spaces");
  // A tab after the indentation is harmless.
  CHECK(load("chip:\n  width:\t3\n").get_int("chip.width") == 3);
}

TEST_CASE("a repeated key is an error at its second occurrence", "[config][errors][yaml]") {
  CHECK(load_error("chip:\n  width: 3\n  link: {hop_cycles: 1}\n  width: 4\n") ==
        "exp.yaml:4:3: duplicate key 'width' in chip (first given at line 2)");
  CHECK(load_error("chip: {width: 3}\nchip: {width: 4}\n") ==
        "exp.yaml:2:1: duplicate key 'chip' at top level (first given at line 1)");
  CHECK(load_error("chip: {width: 3, link: {lanes: [1], lanes: [2]}}\n") ==
        "exp.yaml:1:37: duplicate key 'lanes' in chip.link (first given at line 1)");
}

TEST_CASE("empty, non-mapping and non-text files", "[config][errors][yaml]") {
  CHECK(load_error("") == "exp.yaml:1: empty file; expected a mapping of sections (chip, run)");
  CHECK(load_error("# just a comment\n") == "exp.yaml:1: empty file; expected a mapping of sections (chip, run)");
  CHECK(load_error("- chip\n") == "exp.yaml:1:1: top level must be a mapping of sections (chip, run), got a list");
  CHECK(load_error("chip\n") == "exp.yaml:1:1: top level must be a mapping of sections (chip, run), got a scalar");
  CHECK(load_error(std::string("chip: {width: 3}\n\0\0", 19)) == "exp.yaml:1: not a text file");
  CHECK(load_error("chip: {width: 3}\nrun: {label: \xff}\n") == "exp.yaml:1: not a text file");
  CHECK(load_error("run: {label: \xc0\xaf}\n") == "exp.yaml:1: not a text file");  // overlong encoding
  CHECK(load("chip: {width: 3}\nrun: {label: caf\xc3\xa9}\n").get_string("run.label") == "caf\xc3\xa9");
}

TEST_CASE("aliases that expand to a huge tree are refused", "[config][errors][yaml]") {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  CHECK(load_error(text) == "exp.yaml:1: too many YAML nodes (aliases expanding?)");
}

TEST_CASE("files: missing, a folder, larger than 1 MiB", "[config][errors][file]") {
  TempDir dir;
  const std::string missing = dir.path() + "/missing.yaml";
  REQUIRE_THROWS_WITH(load_file(test_schema(), missing, test_options()),
                      missing + ": cannot read: No such file or directory");
  REQUIRE_THROWS_WITH(load_file(test_schema(), dir.path(), test_options()),
                      dir.path() + ": cannot read: is a directory");
  // Built here rather than committed: 10 MB of valid-looking YAML.
  std::string big;
  while (big.size() < 10'000'000) big += "# padding padding padding padding padding padding padding padding\n";
  const std::string large = dir.write("large.yaml", "chip: {width: 3}\n" + big);
  REQUIRE_THROWS_WITH(load_file(test_schema(), large, test_options()),
                      large + ": larger than 1 MiB; not an experiment file");
}

TEST_CASE("messages stay on one line whatever the key holds", "[config][errors]") {
  const std::string message = load_error("chip: {width: 3, \"a\\nb\": 1}\n");
  CHECK(message == "exp.yaml:1:18: unknown key 'a\\nb' in chip");
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("Config::fail reports at the value's location", "[config][errors]") {
  const Config config = load("chip:\n  width: 3\n");
  REQUIRE_THROWS_WITH(config.fail("chip.width", "too narrow"), "exp.yaml:2:10: chip.width: too narrow");
  try {
    config.fail("chip.width", "too narrow");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "chip.width");
  }
}

TEST_CASE("one YAML document per file, and none in an override", "[config][errors]") {
  CHECK(load_error("chip: {width: 3}\n---\nrun: {fast: true}\n") ==
        "exp.yaml:2:1: a second YAML document ('---'); an experiment file holds one document");
  CHECK(
      load_error("chip: {width: 3}\n...\n# a comment is fine\nrun: {fast: true}\n") ==
      "exp.yaml:4:1: text after the end of the YAML document ('...' at line 2); an experiment file holds one document");
  // A leading marker, a final "..." and comments after it are one document.
  CHECK(load_error("# exp\n---\nchip: {width: 3}\n...\n# done\n").empty());
  CHECK(load_error("--- {chip: {width: 3}}\n").empty());
  CHECK(load_error("chip: {width: 3}\n", {"run.label=..."}) ==
        "--set run.label=...: the value holds a YAML document marker ('---' or '...'); --set takes one value");
  CHECK(load_error("chip: {width: 3}\n", {"chip.width=4\n---\n5"}) ==
        "--set chip.width=4\\n---\\n5: the value holds a YAML document marker ('---' or '...'); --set takes one value");
}

TEST_CASE("explicit YAML tags are refused, not read as numbers", "[config][errors]") {
  CHECK(load_error("chip: {width: !!str 16}\n") ==
        "exp.yaml:1:15: explicit YAML tag '!!str' is not supported; write the value plain");
  CHECK(load_error("chip: {width: !foo 16}\n") ==
        "exp.yaml:1:15: explicit YAML tag '!foo' is not supported; write the value plain");
  CHECK(load_error("chip: {width: 3, link: {lanes: [1, !!int 2]}}\n") ==
        "exp.yaml:1:36: explicit YAML tag '!!int' is not supported; write the value plain");
  CHECK(load_error("chip: !!map {width: 3}\n") ==
        "exp.yaml:1:7: explicit YAML tag '!!map' is not supported; write the value plain");
  CHECK(load_error("chip: {width: 3}\n", {"chip.link.hop_cycles=!foo 4"}) ==
        "--set chip.link.hop_cycles=!foo 4: explicit YAML tag '!foo' is not supported; write the value plain");
  CHECK(load_error("chip: {width: 3}\n", {"chip.link.lanes=[!!str 1]"}) ==
        "--set chip.link.lanes=[!!str 1]: explicit YAML tag '!!str' is not supported; write the value plain");
}

TEST_CASE("integer ranges compare as integers, beyond what a double can tell apart", "[config][errors]") {
  Schema schema;
  schema.add(int_param("big.seed", "", "1", 0, 9007199254740992.0, "Up to 2^53"));
  schema.add(int_param("big.low", "", "0", -9007199254740992.0, 0, "Down to -2^53"));
  schema.add(int_param("big.any", "", "0", -std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity(), "Unbounded"));
  auto error = [&](const std::string& text) {
    try {
      load_string(schema, text, "exp.yaml", LoadOptions{});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("big: {seed: 9007199254740992}\n").empty());
  CHECK(error("big: {seed: 9007199254740993}\n") ==
        "exp.yaml:1:13: big.seed = 9007199254740993 is out of range; allowed [0, 9007199254740992]");
  CHECK(error("big: {low: -9007199254740992}\n").empty());
  CHECK(error("big: {low: -9007199254740993}\n") ==
        "exp.yaml:1:12: big.low = -9007199254740993 is out of range; allowed [-9007199254740992, 0]");
  CHECK(error("big: {any: 9223372036854775807, low: 0}\n").empty());
  CHECK(error("big: {any: -9223372036854775808}\n").empty());
}

TEST_CASE("a file with CR-only line endings reads line by line", "[config][errors]") {
  CHECK(load_error("# old Mac file\rchip:\r  width: 3\r  link: {hop_cycles: 2}\r").empty());
  CHECK(load("# old Mac file\rchip:\r  width: 3\r").where("chip.width").str() == "exp.yaml:3:10");
  CHECK(load_error("# old Mac file\rchip:\r  width: 3\r  wdth: 4\r") ==
        "exp.yaml:4:3: unknown key 'wdth' in chip; did you mean 'width'?");
  CHECK(load_error("chip:\r\n  width: 3\r\n  wdth: 4\r\n") ==
        "exp.yaml:3:3: unknown key 'wdth' in chip; did you mean 'width'?");
}

TEST_CASE("checks between values blame the one the user wrote", "[config][errors]") {
  auto blamed = [](const std::string& text, std::vector<std::string> overrides = {}) {
    const Config config = load(text, std::move(overrides));
    try {
      config.fail_given({"chip.link.hop_cycles", "chip.link.turn_cycles"}, "inconsistent");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Neither written: the later-declared default.
  CHECK(blamed("chip: {width: 3}\n") == "default: chip.link.turn_cycles: inconsistent");
  CHECK(blamed("chip: {width: 3, link: {hop_cycles: 4}}\n") == "exp.yaml:1:37: chip.link.hop_cycles: inconsistent");
  // The file's value over the preset's.
  CHECK(blamed("chip: {link: {turn_cycles: 5}, preset: small}\n") ==
        "exp.yaml:1:28: chip.link.turn_cycles: inconsistent");
  CHECK(blamed("chip: small\n") == "presets/small.yaml:3:15: chip.link.hop_cycles: inconsistent");
  CHECK(blamed("chip: {width: 3, link: {hop_cycles: 4}}\n", {"chip.link.turn_cycles=6"}) ==
        "--set chip.link.turn_cycles=6: chip.link.turn_cycles: inconsistent");
}
