#pragma once
// The page `wafersim report` writes: one self-contained HTML file. Its
// Content-Security-Policy allows no script, no network and nothing outside
// the file, so a browser that shows it has loaded everything there is.
#include <string>
#include <vector>

namespace wafersim::cli {

// `text` safe inside an element or a quoted attribute.
std::string escape_html(const std::string& text);

// A table: a header row, then rows of cells (text, escaped here); the columns
// whose `numeric` entry is true align right.
std::string html_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& numeric);

class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}
  // A section under its own <h2>, listed in the page's contents; `body` is HTML.
  void add_section(const std::string& id, const std::string& title, const std::string& body);
  std::string str() const;

 private:
  struct Section {
    std::string id, title, body;
  };
  std::string title_;
  std::vector<Section> sections_;
};

}  // namespace wafersim::cli
