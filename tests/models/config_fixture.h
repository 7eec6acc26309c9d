#pragma once
// A small schema of its own, so the configuration tests do not depend on the
// real hardware, model or workload declarations.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "models/config/config.h"

namespace wafersim::config::testing {

inline const Schema& test_schema() {
  static const Schema schema = [] {
    Schema s;
    s.add(int_param("chip.width", "tiles", std::nullopt, 1, 1000, "Tiles in x"));
    s.add(float_param("chip.clock_ghz", "GHz", "1.5", 0.01, 10, "Clock"));
    s.add(int_param("chip.link.hop_cycles", "cycles", "1", 0, 100, "Per hop"));
    s.add(int_param("chip.link.turn_cycles", "cycles", "2", 0, 100, "Per turn"));
    ParamSpec lanes = int_param("chip.link.lanes", "lanes", "[0, 1]", 0, 7, "Lanes in use");
    lanes.type = ParamType::IntList;
    s.add(lanes);
    ParamSpec count = int_param("chip.count", "chips", "auto", 1, 8, "Chips; auto = fewest that fit");
    count.type = ParamType::IntOrAuto;
    s.add(count);
    s.add(bool_param("run.fast", false, "Skip the slow path"));
    s.add(enum_param("run.mode", {"exact", "approximate"}, "exact", "How to run"));
    s.add(string_param("run.label", "plain", "Free text"));
    return s;
  }();
  return schema;
}

inline const std::vector<EmbeddedFile>& test_presets() {
  static const std::vector<EmbeddedFile> presets = {
      {"small", "presets/small.yaml", "width: 4\nlink:\n  hop_cycles: 3\n"},
      {"broken", "presets/broken.yaml", "width: 4\nlink:\n  hop: 3\n"},
  };
  return presets;
}

inline LoadOptions test_options(std::vector<std::string> overrides = {}) {
  LoadOptions options;
  options.overrides = std::move(overrides);
  options.presets["chip"] = &test_presets();
  return options;
}

inline Config load(const std::string& text, std::vector<std::string> overrides = {}) {
  return load_string(test_schema(), text, "exp.yaml", test_options(std::move(overrides)));
}

// The message of the ConfigError that loading `text` throws ("" if none).
inline std::string load_error(const std::string& text, std::vector<std::string> overrides = {}) {
  try {
    load(text, std::move(overrides));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A fresh folder under the system temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("wafersim-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace wafersim::config::testing
