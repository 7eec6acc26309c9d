#pragma once
// What `wafersim report` reads: the --json documents of run, analytic and
// serve and the search.json of `wafersim search`, recognised by their keys, and the folders
// --heatmaps writes. Each reader throws CommandError (exit 2) with one line
// naming the file for anything it cannot draw.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/report/npy_read.h"

namespace wafersim::cli {

enum class ResultKind {
  kDecode,  // run or analytic: "engine" and a "metrics" object
  kServe,   // serve: a "serving" object
  kSearch   // `wafersim search`'s search.json: "objective" and "pareto_against" objects, a "pareto" array
};

struct ReportInput {
  std::string path;
  ResultKind kind;
  nlohmann::json document;
};

ReportInput read_report_input(const std::string& path);

struct HeatmapArray {
  std::string quantity;
  std::string unit;
  std::string description;
  uint32_t wafer = 0;
  NpyGrid grid;
  std::vector<std::string> categories;  // a categorical array's names, by value; empty for an amount
};

struct HeatmapFolder {
  std::string folder;
  std::string source;  // "run" (busy fractions measured) or "plan"
  std::string model;
  std::string hardware;
  std::vector<HeatmapArray> arrays;
};

// The folder's heatmaps.json and every array it names: the logical grid's and,
// on a repaired wafer, the physical grid's.
HeatmapFolder read_heatmap_folder(const std::string& folder);

// The value at a dotted path of `document` (a number indexes an array:
// "metrics.per_layer.3.region"); nullptr when it has none.
const nlohmann::json* find_path(const nlohmann::json& document, const std::string& path);
// The number at `path` of the input's document; CommandError (exit 2) naming the
// file and the key when it is missing or not a number.
double number_at(const ReportInput& input, const std::string& path);

}  // namespace wafersim::cli
