#include "sim/cli/report/report_inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include "sim/reports/command_error.h"

namespace wafersim::cli {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw reports::CommandError(reports::kExitBadInput, path + ": " + why);
}

// A regular file's whole text; a folder, FIFO or device is refused before it is
// opened (a FIFO would block until a writer came).
std::string read_regular_file(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) refuse(path, std::string("cannot read: ") + std::strerror(errno));
  if (S_ISDIR(status.st_mode)) refuse(path, "cannot read: it is a folder, not a file");
  if (!S_ISREG(status.st_mode)) refuse(path, "cannot read: not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) refuse(path, "cannot read: read error");
  return text.str();
}

// The library's message without its "[json.exception.parse_error.101] ", which names no input.
std::string json_message(const nlohmann::json::exception& error) {
  const std::string why = error.what();
  const size_t bracket = why.find("] ");
  return bracket == std::string::npos ? why : why.substr(bracket + 2);
}

nlohmann::json parse_json(const std::string& path) {
  try {
    return nlohmann::json::parse(read_regular_file(path));
  } catch (const nlohmann::json::parse_error& error) {
    refuse(path, "not JSON: " + json_message(error));
  }
}

}  // namespace

ReportInput read_report_input(const std::string& path) {
  nlohmann::json document = parse_json(path);
  const auto has_object = [&](const char* key) { return document.contains(key) && document[key].is_object(); };
  if (!document.is_object() || !document.contains("version"))
    refuse(path,
           "not a wafersim result (expected the --json FILE of run, analytic or serve, or a search's search.json)");
  if (document.contains("fits") && document["fits"] == false)
    refuse(path, "the model does not fit (\"fits\": false): no figures to report");
  if (has_object("metrics") && document.contains("engine")) return {path, ResultKind::kDecode, std::move(document)};
  if (has_object("serving")) return {path, ResultKind::kServe, std::move(document)};
  if (has_object("objective") && has_object("pareto_against") && document.contains("pareto") &&
      document["pareto"].is_array())
    return {path, ResultKind::kSearch, std::move(document)};
  refuse(path, "not a wafersim result: no \"metrics\" (run, analytic), \"serving\" (serve) or \"pareto\" (search)");
}

HeatmapFolder read_heatmap_folder(const std::string& folder) {
  const std::string index_path = folder + "/heatmaps.json";
  const nlohmann::json index = parse_json(index_path);
  HeatmapFolder out;
  out.folder = folder;
  try {
    out.source = index.at("source").get<std::string>();
    out.model = index.at("model").get<std::string>();
    out.hardware = index.at("hardware").get<std::string>();
    const auto read_arrays = [&](const nlohmann::json& arrays) {
      for (const nlohmann::json& array : arrays) {
        const nlohmann::json& files = array.at("files");
        const std::vector<std::string> categories =
            array.value("categories", nlohmann::json::array()).get<std::vector<std::string>>();
        for (size_t wafer = 0; wafer < files.size(); ++wafer)
          out.arrays.push_back({array.at("quantity").get<std::string>(), array.at("unit").get<std::string>(),
                                array.at("description").get<std::string>(), uint32_t(wafer),
                                read_npy_grid(folder + "/" + files[wafer].get<std::string>()), categories});
      }
    };
    read_arrays(index.at("arrays"));
    if (index.contains("physical_grid")) read_arrays(index["physical_grid"].at("arrays"));
  } catch (const nlohmann::json::exception& error) {
    refuse(index_path, "not the index of --heatmaps: " + json_message(error));
  }
  return out;
}

const nlohmann::json* find_path(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* node = &document;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t dot = std::min(path.find('.', begin), path.size());
    const std::string key = path.substr(begin, dot - begin);
    if (node->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
      const size_t index = std::stoul(key);
      if (index >= node->size()) return nullptr;
      node = &node->at(index);
    } else {
      if (!node->is_object() || !node->contains(key)) return nullptr;
      node = &node->at(key);
    }
    begin = dot + 1;
  }
  return node;
}

double number_at(const ReportInput& input, const std::string& path) {
  const nlohmann::json* value = find_path(input.document, path);
  if (!value) refuse(input.path, "no key " + path);
  if (!value->is_number()) refuse(input.path, "key " + path + " is " + value->type_name() + ", not a number");
  return value->get<double>();
}

}  // namespace wafersim::cli
