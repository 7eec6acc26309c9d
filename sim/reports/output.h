#pragma once
// Output every command shares: JSON files written atomically, and aligned
// tables whose headers carry the units of their columns.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wafersim::reports {

// Writes `document` to `path` ("-" = stdout) through a temporary file in the same
// folder and a rename, so a reader never sees a partial file and a failed write
// leaves none behind. Failure throws CommandError (exit code 2).
void write_json(const std::string& path, const nlohmann::json& document);

// The same for any text: a temporary file named "<path>.tmp-N" in the same
// folder, then a rename. A killed writer leaves the old file or the new one, never half.
// One rule for every output path: a new file gets mode 0666 less the umask, an
// existing regular file is replaced and keeps its mode, a character device
// (/dev/null) is written through, and anything else there (a symbolic link, a
// FIFO, a socket, a folder) is refused with CommandError naming the path; a link
// is never followed.
void write_text_atomically(const std::string& path, const std::string& text);
// Checks, before any long work, that write_text_atomically(path, ...) can
// succeed: a folder that is missing or read-only, or a path the rule above
// refuses, throws CommandError (exit 2) naming the path; nothing is left behind.
void check_writable(const std::string& path);
// The same for a folder of output files (--csv, --heatmaps): it exists or its
// parent does (it is then created when written), a file can be created in it,
// and none of its entries whose name ends in one of `file_suffixes` (the files
// it will be given) is refused by the rule above.
void check_writable_folder(const std::string& folder, const std::vector<std::string>& file_suffixes);
// Creates `folder` if it does not exist (its parent must); CommandError otherwise.
void make_folder(const std::string& folder);

// Appends `text` with one write, so a line is never interleaved with another writer's;
// a symbolic link at `path` is refused, not followed.
void append_text(const std::string& path, const std::string& text);

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

}  // namespace wafersim::reports
