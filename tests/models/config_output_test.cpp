// The resolved configuration as YAML, its hash, and the parameter listing.
#include <catch2/catch.hpp>

#include "models/config/text.h"
#include "tests/models/config_fixture.h"

using namespace wafersim::config;
using namespace wafersim::config::testing;

TEST_CASE("to_yaml prints every parameter nested, in declaration order, preset first", "[config][yaml]") {
  const Config config = load("run: {label: \"two words\"}\nchip:\n  preset: small\n  count: 2\n");
  CHECK(config.to_yaml() ==
        "chip:\n"
        "  preset: small\n"
        "  width: 4\n"
        "  clock_ghz: 1.5\n"
        "  link:\n"
        "    hop_cycles: 3\n"
        "    turn_cycles: 2\n"
        "    lanes: [0, 1]\n"
        "  count: 2\n"
        "run:\n"
        "  fast: false\n"
        "  mode: exact\n"
        "  label: \"two words\"\n");
}

TEST_CASE("loading the printed YAML gives the same configuration and hash", "[config][yaml]") {
  const std::vector<std::string> texts = {
      "chip: small\n",
      "chip: {width: 9, clock_ghz: 0.1, count: auto, link: {lanes: []}}\nrun: {label: \"yes\"}\n",
      "chip: {width: 9, clock_ghz: 1.1}\nrun: {label: \"a \\\"quoted\\\" \\\\ tab\\t line\\nbreak\", mode: "
      "approximate}\n",
  };
  for (const std::string& text : texts) {
    const Config first = load(text);
    const Config again = load(first.to_yaml());
    CHECK(again.to_yaml() == first.to_yaml());
    CHECK(again.hash() == first.hash());
    CHECK(again.get_string("run.label") == first.get_string("run.label"));
    CHECK(again.get_float("chip.clock_ghz") == first.get_float("chip.clock_ghz"));
  }
}

TEST_CASE("the hash is FNV-1a 64 of the printed YAML", "[config][hash]") {
  // Published FNV-1a 64 test vectors (Fowler, Noll, Vo).
  CHECK(fnv1a64_hex("") == "cbf29ce484222325");
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");
  CHECK(fnv1a64_hex("foobar") == "85944171f73967e8");
  const Config config = load("chip: small\n");
  CHECK(config.hash() == fnv1a64_hex(config.to_yaml()));
}

TEST_CASE("the hash depends on values, not on how the file is written", "[config][hash]") {
  const std::string hash = load("chip:\n  width: 4\n  link: {hop_cycles: 3}\n").hash();
  CHECK(load("chip: {link: {hop_cycles: 3}, width: 4}  # reordered\n").hash() == hash);
  CHECK(load("chip: {width: 4}\n", {"chip.link.hop_cycles=3"}).hash() == hash);
  CHECK(load("chip:\n  width: 4\n  link: {hop_cycles: 4}\n").hash() != hash);
  // Naming the preset is part of the identity of the configuration.
  CHECK(load("chip: small\n").hash() != hash);
}

TEST_CASE("describe_params lists path, type, unit, default, range and description", "[config][describe]") {
  const std::string text = describe_params(test_schema());
  CHECK_THAT(text,
             Catch::Contains(
                 "chip.width  (int, tiles)\n    default: required\n    allowed: [1, 1000] tiles\n    Tiles in x\n"));
  CHECK_THAT(text, Catch::Contains("run.mode  (enum)\n    default: exact\n    allowed: one of: exact, approximate\n"));
  CHECK_THAT(text, Catch::Contains("chip.count  (int or auto, chips)\n    default: auto\n"));
  const std::string link = describe_params(test_schema(), "chip.link");
  CHECK_THAT(link, Catch::StartsWith("chip.link.hop_cycles"));
  CHECK(link.find("chip.width") == std::string::npos);
  CHECK(describe_params(test_schema(), "nothing").empty());
}

TEST_CASE("the schema refuses a parameter declared twice or inside another", "[config][schema]") {
  Schema schema;
  schema.add(int_param("a.b", "", "1", 0, 9, ""));
  CHECK_THROWS_AS(schema.add(int_param("a.b", "", "1", 0, 9, "")), std::logic_error);
  CHECK_THROWS_AS(schema.add(int_param("a.b.c", "", "1", 0, 9, "")), std::logic_error);
  CHECK_THROWS_AS(schema.add(int_param("top", "", "1", 0, 9, "")), std::logic_error);
  CHECK(schema.is_section("a"));
  CHECK_FALSE(schema.is_section("a.b"));
  CHECK(test_schema().child_keys("chip") == std::vector<std::string>{"width", "clock_ghz", "link", "count"});
}

TEST_CASE("suggestions: typos and shortened names, nothing when far", "[config][suggest]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> keys = {"colors", "colors_reserved", "hop_latency_cycles", "relay_cycles"};
  CHECK(closest("colours", keys) == std::optional<std::string>("colors"));
  CHECK(closest("hop_latency", keys) == std::optional<std::string>("hop_latency_cycles"));
  CHECK(closest("colors_res", keys) == std::optional<std::string>("colors_reserved"));
  CHECK(closest("bandwidth", keys) == std::nullopt);
  CHECK(did_you_mean("relay", keys) == "; did you mean 'relay_cycles'?");
}

TEST_CASE("numbers print in the shortest form that reads back exactly", "[config][yaml]") {
  CHECK(format_number(1.1) == "1.1");
  CHECK(format_number(2) == "2");
  CHECK(format_number(1000000) == "1000000");
  CHECK(format_number(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_number(1e-7) == "1e-07");
}
