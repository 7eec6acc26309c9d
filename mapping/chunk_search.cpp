#include "mapping/chunk_search.h"

#include <algorithm>
#include <vector>

namespace wafersim::mapping {

uint64_t fastest_chunk(uint64_t largest, const std::function<uint64_t(uint64_t chunk)>& cycles) {
  auto faster = [&](uint64_t a, uint64_t b) {
    const uint64_t at_a = cycles(a), at_b = cycles(b);
    return at_a < at_b || (at_a == at_b && a > b);
  };
  std::vector<uint64_t> ladder;
  for (uint64_t power = 1; power < largest; power *= 2)
    for (uint64_t rung : {power, power + power / 2})
      if (rung < largest && (ladder.empty() || rung > ladder.back())) ladder.push_back(rung);
  ladder.push_back(largest);
  size_t best = 0;
  for (size_t i = 1; i < ladder.size(); ++i)
    if (faster(ladder[i], ladder[best])) best = i;
  // The time is jagged from chunk to chunk (the prompt's last chunk is
  // padded): between close rungs every chunk is timed.
  const uint64_t below = best > 0 ? ladder[best - 1] : 1;
  const uint64_t above = best + 1 < ladder.size() ? ladder[best + 1] : ladder[best];
  uint64_t chosen = ladder[best];
  if (above - below <= kEveryChunkWithin) {
    for (uint64_t chunk = below + 1; chunk < above; ++chunk)
      if (faster(chunk, chosen)) chosen = chunk;
    return chosen;
  }
  for (uint64_t step = std::max<uint64_t>(1, (above - below) / 4);; step /= 2) {
    for (bool moved = true; moved;) {
      moved = false;
      for (const uint64_t chunk : {chosen - std::min(chosen, step), chosen + step})
        if (chunk > below && chunk < above && faster(chunk, chosen)) chosen = chunk, moved = true;
    }
    if (step == 1) break;
  }
  return chosen;
}

}  // namespace wafersim::mapping
