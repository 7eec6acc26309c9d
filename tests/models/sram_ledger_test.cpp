// A tile's SRAM ledger: items add up, and the one that does not fit is refused by name.
#include "models/sram_ledger.h"

#include <catch2/catch.hpp>

using namespace wafersim;

TEST_CASE("items fill a tile up to its capacity", "[sram]") {
  SramLedger ledger({0, 3, 4}, 1000);
  ledger.place("runtime", 400);
  ledger.place("weights", 600);
  CHECK(ledger.used_bytes() == 1000);
  CHECK(ledger.free_bytes() == 0);
}

TEST_CASE("an item past the capacity names the tile and the bytes", "[sram]") {
  SramLedger ledger({1, 12, 400}, 49152);
  ledger.place("runtime", 4176);
  ledger.place("weights", 40000);
  try {
    ledger.place("KV cache", 5000);
    FAIL("expected SramOverflow");
  } catch (const SramOverflow& overflow) {
    CHECK(std::string(overflow.what()) ==
          "tile (x 12, y 400) of wafer 1: placing KV cache (5000 B) would use 49176 B of 49152 B "
          "(holds runtime 4176 B, weights 40000 B)");
  }
  CHECK(ledger.used_bytes() == 44176);  // unchanged by the refused item
}
