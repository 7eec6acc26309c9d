#pragma once
// What one tile's SRAM holds, item by item, against its capacity: placing an
// item that does not fit is an error naming the tile, the item and the bytes.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wafersim {

struct TileAddress {
  uint32_t wafer = 0, x = 0, y = 0;
};

class SramOverflow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SramLedger {
 public:
  SramLedger(TileAddress tile, uint64_t capacity_bytes) : tile_(tile), capacity_bytes_(capacity_bytes) {}

  // Adds an item; throws SramOverflow, leaving the ledger unchanged, when it does not fit.
  void place(const std::string& what, uint64_t bytes);
  uint64_t used_bytes() const { return used_bytes_; }
  uint64_t free_bytes() const { return capacity_bytes_ - used_bytes_; }

 private:
  TileAddress tile_;
  uint64_t capacity_bytes_;
  uint64_t used_bytes_ = 0;
  std::vector<std::pair<std::string, uint64_t>> items_;
};

}  // namespace wafersim
