#pragma once
// Output every command shares: JSON files written atomically, and aligned
// tables whose headers carry the units of their columns.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wafersim::cli {

// Writes `document` to `path` ("-" = stdout) through a temporary file in the same
// folder and a rename, so a reader never sees a partial file and a failed write
// leaves none behind. Failure throws CommandError (exit code 2).
void write_json(const std::string& path, const nlohmann::json& document);

// A text table: one header line ("clock (GHz)"), then rows, columns padded to
// their widest cell; numeric columns align right.
class Table {
 public:
  struct Column {
    std::string title;
    std::string unit;          // shown in the header; "" for none
    bool align_right = false;  // true for numbers
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // One cell per column; a missing cell is blank (std::logic_error if too many).
  void add_row(std::vector<std::string> cells);
  std::string str() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace wafersim::cli
