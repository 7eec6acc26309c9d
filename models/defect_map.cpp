#include "models/defect_map.h"

#include <algorithm>
#include <random>
#include <sstream>

#include "models/config/error.h"
#include "models/config/source_text.h"

namespace wafersim {

namespace {

constexpr const char* kMapKey = "hardware.defects.map";
constexpr uint8_t kTileDead = 1;
constexpr uint8_t kEastDead = 2;
constexpr uint8_t kSouthDead = 4;

// A uniform draw in [0, 1) from the top 53 bits: the same on every standard library
// (std::uniform_real_distribution is not specified bit for bit).
double uniform(std::mt19937_64& generator) { return double(generator() >> 11) * 0x1.0p-53; }

class MapReader {
 public:
  MapReader(std::string path, uint32_t width, uint32_t height) : path_(std::move(path)), map_(width, height) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw config::ConfigError({path_, line, 0}, kMapKey, std::string(kMapKey) + ": " + message);
  }

  uint32_t coordinate(int line, const std::string& text, const char* axis, uint32_t size) const {
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) fail(line, std::string(axis) + " '" + text + "' is not a whole number");
    if (value < 0 || value >= (long long)size)
      fail(line, std::string(axis) + " = " + text + " is outside the " + std::to_string(map_.width) + " x " +
                     std::to_string(map_.height) + " physical grid (the logical grid and its spares)");
    return uint32_t(value);
  }

  LinkDir direction(int line, const std::string& text) const {
    if (text == "east") return LinkDir::East;
    if (text == "south") return LinkDir::South;
    fail(line, "link direction '" + text + "' is neither east nor south");
  }

  void tile(int line, const std::vector<std::string>& fields) {
    if (fields.size() != 2) fail(line, "a dead tile is [x, y]");
    map_.kill_tile(coordinate(line, fields[0], "x", map_.width), coordinate(line, fields[1], "y", map_.height));
  }

  void link(int line, const std::vector<std::string>& fields) {
    if (fields.size() != 3) fail(line, "a dead link is [x, y, east|south]");
    const uint32_t x = coordinate(line, fields[0], "x", map_.width);
    const uint32_t y = coordinate(line, fields[1], "y", map_.height);
    const LinkDir dir = direction(line, fields[2]);
    if ((dir == LinkDir::East && x + 1 >= map_.width) || (dir == LinkDir::South && y + 1 >= map_.height))
      fail(line, "the link " + fields[2] + " of (" + fields[0] + ", " + fields[1] + ") leaves the grid");
    map_.kill_link(x, y, dir);
  }

  void read_yaml(const std::string& text) {
    const YAML::Node root = config::parse_config_text(text, path_);
    if (!root.IsMap()) fail(1, "a map file holds dead_tiles and dead_links");
    for (const auto& entry : root) {
      const std::string key = entry.first.Scalar();
      const int key_line = config::location_of(path_, entry.first.Mark()).line;
      if (key != "dead_tiles" && key != "dead_links")
        fail(key_line, "unknown key '" + key + "' (dead_tiles, dead_links)");
      if (entry.second.IsNull()) continue;
      if (!entry.second.IsSequence()) fail(key_line, key + " is a list");
      for (const YAML::Node& item : entry.second) {
        const int line = config::location_of(path_, item.Mark()).line;
        if (!item.IsSequence()) fail(line, "an entry of " + key + " is a list such as [3, 4]");
        std::vector<std::string> fields;
        for (const YAML::Node& field : item) {
          if (!field.IsScalar()) fail(line, "an entry of " + key + " holds numbers and a direction only");
          fields.push_back(field.Scalar());
        }
        key == "dead_tiles" ? tile(line, fields) : link(line, fields);
      }
    }
  }

  void read_csv(const std::string& text) {
    std::istringstream lines(text);
    int line = 0;
    for (std::string row; std::getline(lines, row);) {
      ++line;
      if (!row.empty() && row.back() == '\r') row.pop_back();
      if (row.empty() || row[0] == '#') continue;
      std::vector<std::string> fields;
      std::istringstream cells(row);
      for (std::string cell; std::getline(cells, cell, ',');) {
        cell.erase(0, cell.find_first_not_of(" \t"));
        cell.erase(cell.find_last_not_of(" \t") + 1);
        fields.push_back(cell);
      }
      if (line == 1 && fields[0] == "kind") continue;
      const std::vector<std::string> rest(fields.begin() + 1, fields.end());
      if (fields[0] == "tile")
        tile(line, rest);
      else if (fields[0] == "link")
        link(line, rest);
      else
        fail(line, "a row starts with tile or link, not '" + fields[0] + "'");
    }
  }

  DefectMap take() { return std::move(map_); }

 private:
  std::string path_;
  DefectMap map_;
};

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

bool DefectMap::tile_dead(uint32_t x, uint32_t y) const { return (retire[size_t(y) * width + x] & kTileDead) != 0; }

void DefectMap::kill_tile(uint32_t x, uint32_t y) {
  uint8_t& flags = retire[size_t(y) * width + x];
  if (!(flags & kTileDead)) ++dead_tiles;
  flags |= kTileDead;
}

void DefectMap::kill_link(uint32_t x, uint32_t y, LinkDir dir) {
  uint8_t& flags = retire[size_t(y) * width + x];
  const uint8_t bit = dir == LinkDir::East ? kEastDead : kSouthDead;
  if (!(flags & bit)) ++dead_links;
  flags |= bit;
}

DefectMap draw_defects(const DefectParams& params, uint32_t width, uint32_t height) {
  DefectMap map(width, height);
  std::mt19937_64 generator(params.seed);
  const int64_t r = params.cluster_radius;
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const bool tile = uniform(generator) < params.tile_failure_rate;
      const bool east = uniform(generator) < params.link_failure_rate && x + 1 < width;
      const bool south = uniform(generator) < params.link_failure_rate && y + 1 < height;
      if (tile)
        for (int64_t cy = std::max<int64_t>(0, y - r); cy <= std::min<int64_t>(height - 1, y + r); ++cy)
          for (int64_t cx = std::max<int64_t>(0, x - r); cx <= std::min<int64_t>(width - 1, x + r); ++cx)
            map.kill_tile(uint32_t(cx), uint32_t(cy));
      if (east) map.kill_link(x, y, LinkDir::East);
      if (south) map.kill_link(x, y, LinkDir::South);
    }
  return map;
}

DefectMap read_defect_map(const std::string& path, uint32_t width, uint32_t height) {
  MapReader reader(path, width, height);
  const std::string text = config::read_config_file(path);
  if (ends_with(path, ".csv"))
    reader.read_csv(text);
  else
    reader.read_yaml(text);
  return reader.take();
}

}  // namespace wafersim
