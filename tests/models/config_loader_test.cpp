// Loading: nested paths, defaults, presets by name, path and inline, --set.
#include <catch2/catch.hpp>

#include "models/config/text.h"
#include "tests/models/config_fixture.h"

using namespace wafersim::config;
using namespace wafersim::config::testing;

TEST_CASE("nested keys follow the declared paths and remember their position", "[config]") {
  const Config config = load("chip:\n  width: 12\n  link:\n    hop_cycles: 5\n");
  CHECK(config.get_int("chip.width") == 12);
  CHECK(config.get_int("chip.link.hop_cycles") == 5);
  CHECK(config.where("chip.link.hop_cycles").str() == "exp.yaml:4:17");
  CHECK_FALSE(config.is_default("chip.link.hop_cycles"));
}

TEST_CASE("defaults fill every parameter that is not given", "[config]") {
  const Config config = load("chip:\n  width: 12\n");
  CHECK(config.entries().size() == test_schema().params().size());
  CHECK(config.get_float("chip.clock_ghz") == 1.5);
  CHECK(config.get_int_list("chip.link.lanes") == std::vector<int64_t>{0, 1});
  CHECK(config.get_int("chip.count") == 0);  // auto
  CHECK(config.get_bool("run.fast") == false);
  CHECK(config.get_string("run.mode") == "exact");
  CHECK(config.is_default("chip.clock_ghz"));
  CHECK(config.entries().at("chip.clock_ghz").from_default);
}

TEST_CASE("a value equal to its default counts as default, however it was given", "[config]") {
  // So that loading the printed YAML behaves exactly like the original.
  const Config config = load("chip: {width: 3, clock_ghz: 1.5, count: auto, link: {lanes: [0, 1], hop_cycles: 2}}\n");
  CHECK(config.is_default("chip.clock_ghz"));
  CHECK(config.is_default("chip.count"));
  CHECK(config.is_default("chip.link.lanes"));
  CHECK_FALSE(config.is_default("chip.link.hop_cycles"));
  CHECK_FALSE(config.entries().at("chip.clock_ghz").from_default);
}

TEST_CASE("values of every type are read", "[config]") {
  const Config config = load(
      "chip:\n  width: 3\n  clock_ghz: 2\n  count: 4\n  link: {lanes: [1, 2, 3]}\n"
      "run:\n  fast: true\n  mode: approximate\n  label: two words\n");
  CHECK(config.get_float("chip.clock_ghz") == 2.0);  // an integer is a valid number
  CHECK(config.get_int("chip.count") == 4);
  CHECK(config.get_int_list("chip.link.lanes") == std::vector<int64_t>{1, 2, 3});
  CHECK(config.get_bool("run.fast"));
  CHECK(config.get_string("run.mode") == "approximate");
  CHECK(config.get_string("run.label") == "two words");
}

TEST_CASE("reading an undeclared path or the wrong type is a programming error", "[config]") {
  const Config config = load("chip: {width: 3}\n");
  CHECK_THROWS_AS(config.get_int("chip.nothing"), std::logic_error);
  CHECK_THROWS_AS(config.get_bool("chip.width"), std::logic_error);
}

TEST_CASE("a preset by name supplies values and its file's positions", "[config][preset]") {
  const Config config = load("chip: small\n");
  CHECK(config.get_int("chip.width") == 4);
  CHECK(config.get_int("chip.link.hop_cycles") == 3);
  CHECK(config.preset("chip") == "small");
  CHECK(config.where("chip.link.hop_cycles").str() == "presets/small.yaml:3:15");
}

TEST_CASE("an inline mapping overrides the preset it names", "[config][preset]") {
  // The override comes first in the file, yet still wins over the preset.
  const Config config = load("chip:\n  link: {hop_cycles: 9}\n  preset: small\n");
  CHECK(config.get_int("chip.width") == 4);
  CHECK(config.get_int("chip.link.hop_cycles") == 9);
  CHECK(config.preset("chip") == "small");
}

TEST_CASE("a preset that is a path is read relative to the experiment file", "[config][preset]") {
  TempDir dir;
  dir.write("hw/mine.yaml", "width: 7\n");
  const std::string experiment = dir.write("exp.yaml", "chip:\n  preset: hw/mine.yaml\n  clock_ghz: 2.5\n");
  const Config config = load_file(test_schema(), experiment, test_options());
  CHECK(config.get_int("chip.width") == 7);
  CHECK(config.get_float("chip.clock_ghz") == 2.5);
  CHECK(config.preset("chip").empty());  // a file is not a named preset

  dir.write("hw/bad.yaml", "width: 7\nwidht: 8\n");
  const std::string bad = dir.write("bad.yaml", "chip: hw/bad.yaml\n");
  REQUIRE_THROWS_WITH(load_file(test_schema(), bad, test_options()),
                      Catch::Contains("hw/bad.yaml:2:1: unknown key 'widht' in chip; did you mean 'width'?"));
}

TEST_CASE("errors inside an embedded preset name the preset's file", "[config][preset]") {
  CHECK(load_error("chip: broken\n") ==
        "presets/broken.yaml:3:3: unknown key 'hop' in chip.link; did you mean 'hop_cycles'?");
}

TEST_CASE("unknown and missing presets", "[config][preset]") {
  CHECK(load_error("chip: smal\n") ==
        "exp.yaml:1:7: unknown chip preset 'smal' (known: small, broken); did you mean 'small'?");
  CHECK_THAT(load_error("chip: no/such.yaml\n"),
             Catch::StartsWith("exp.yaml:1:7: chip preset file no/such.yaml: cannot read: "));
  CHECK(load_error("chip:\n  preset: {a: 1}\n") ==
        "exp.yaml:2:11: chip.preset expects a preset name or a path, got a mapping");
  CHECK(load_error("run: fast\n") == "exp.yaml:1:6: section 'run' expects a mapping of keys, got a scalar");
}

TEST_CASE("overrides (--set) replace file values and report their own location", "[config][set]") {
  const Config config =
      load("chip: small\n", {"chip.link.hop_cycles=6", "chip.link.lanes=[2, 4]", "run.mode=approximate"});
  CHECK(config.get_int("chip.link.hop_cycles") == 6);
  CHECK(config.get_int_list("chip.link.lanes") == std::vector<int64_t>{2, 4});
  CHECK(config.get_string("run.mode") == "approximate");
  CHECK(config.where("chip.link.hop_cycles").str() == "--set chip.link.hop_cycles=6");
  // Later overrides win.
  CHECK(load("chip: small\n", {"chip.width=5", "chip.width=6"}).get_int("chip.width") == 6);
}

TEST_CASE("override (--set) problems are one-line errors at the override", "[config][set]") {
  CHECK(load_error("chip: small\n", {"chip.link.hop=2"}) ==
        "--set chip.link.hop=2: unknown parameter 'chip.link.hop'; did you mean 'chip.link.hop_cycles'?");
  CHECK(load_error("chip: small\n", {"chip.width"}) ==
        "--set chip.width: malformed override; expected --set a.b.c=value");
  CHECK(load_error("chip: small\n", {"=3"}) == "--set =3: malformed override; expected --set a.b.c=value");
  CHECK(load_error("chip: small\n", {"chip.width=2000"}) ==
        "--set chip.width=2000: chip.width = 2000 tiles is out of range; allowed [1, 1000] tiles");
  CHECK(load_error("chip: small\n", {"chip.link=1"}) ==
        "--set chip.link=1: 'chip.link' is a section; --set needs a parameter such as chip.link.hop_cycles");
  CHECK(load_error("chip: small\n", {"chip.link.lanes=[1, x]"}) ==
        "--set chip.link.lanes=[1, x]: chip.link.lanes[1] expects an integer, got 'x'");
  CHECK_THAT(load_error("chip: small\n", {"chip.width=[1,"}),
             Catch::StartsWith("--set chip.width=[1,: cannot read the value of chip.width: "));
  CHECK(load_error("chip: small\n", {"chip.width="}) ==
        "--set chip.width=: chip.width has no value; expected an integer");
}
