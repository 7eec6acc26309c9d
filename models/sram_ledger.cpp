#include "models/sram_ledger.h"

#include <fmt/format.h>

namespace wafersim {

void SramLedger::place(const std::string& what, uint64_t bytes) {
  if (bytes > free_bytes()) {
    std::string held;
    for (const auto& [item, item_bytes] : items_)
      held += fmt::format("{}{} {} B", held.empty() ? "" : ", ", item, item_bytes);
    throw SramOverflow(fmt::format("tile (x {}, y {}) of wafer {}: placing {} ({} B) would use {} B of {} B (holds {})",
                                   tile_.x, tile_.y, tile_.wafer, what, bytes, used_bytes_ + bytes, capacity_bytes_,
                                   held.empty() ? "nothing yet" : held));
  }
  used_bytes_ += bytes;
  items_.emplace_back(what, bytes);
}

}  // namespace wafersim
