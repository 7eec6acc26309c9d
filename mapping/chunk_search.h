#pragma once
// The search behind mapping.prefill_chunk: fastest_fitting, apart from the
// prefill it times, so that its path through a curve can be checked on
// curves of any shape.
#include <cstdint>
#include <functional>

namespace wafersim::mapping {

// Rungs of the ladder at most this far apart have every chunk between them timed.
constexpr uint64_t kEveryChunkWithin = 32;

// Of the chunks 1 .. largest, the one `cycles` times fastest (the larger on a
// tie): the fastest of a ladder 1, 2, 3, 4, 6, 8, 12, 16, ... up to largest,
// then of every chunk between that rung's neighbours where they are at most
// kEveryChunkWithin apart, else of a pattern search between them (steps of a
// quarter of that span halving to one, each taken while it is faster, or as
// fast with a larger chunk). `cycles` is called a few dozen times at most,
// however large `largest` is, and may be called again for a chunk it timed.
uint64_t fastest_chunk(uint64_t largest, const std::function<uint64_t(uint64_t chunk)>& cycles);

}  // namespace wafersim::mapping
