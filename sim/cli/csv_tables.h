#pragma once
// --csv DIR (docs/OBSERVABILITY.md): the per-token, per-layer and per-step
// series of a decode result as CSV files, taken from its JSON document so the
// two never disagree.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wafersim::cli {

inline const std::vector<std::string> kCsvFileSuffixes = {".csv"};

// per_token.csv, per_layer.csv, and when the document has them,
// prefill_per_layer.csv and steps.csv (analytic). Each file is written atomically.
void write_csv_tables(const std::string& folder, const nlohmann::json& document);

}  // namespace wafersim::cli
