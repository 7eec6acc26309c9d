#pragma once
// Reductions of one vector per tile along a line of tiles (a row segment),
// towards the tile at index 0, contention off. Every tile's partial vector is
// ready at cycle 0; a combine of k incoming vectors costs
// compute_cycles(tile, dtype, k * combine).
//
// Chain: tile n-1 sends to n-2, which combines and sends on, ... down to tile 0.
//
// Tree with fan-in f: at level l = 0, 1, ... (stride s = f^l) the tiles whose
// index is a multiple of s form groups of f consecutive ones; in each group the
// first tile (index a multiple of s*f) is the receiver and the others, at
// index receiver + j*s (j = 1..f-1, index < n), send it their partial sum
// (j*s hops) with tag l. The receiver waits for all of them, then combines them
// in one task. Levels repeat while s < n; tile 0 ends with the whole sum.
#include <cstdint>

#include "models/cost.h"
#include "models/hardware.h"

namespace wafersim::oracles {

struct ReduceParams {
  uint32_t tiles = 0;  // n
  uint64_t bytes = 0;  // size of the vector each tile sends
  Work combine;        // work of combining one incoming vector
  Dtype dtype = Dtype::FP16;
};

// (n - 1) * (message_cycles(1 hop, bytes) + compute_cycles(combine)).
uint64_t chain_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce);

// Levels of the tree: the smallest L with f^L >= n.
uint32_t tree_levels(uint32_t tiles, uint32_t fan_in);
// Messages tile `index` receives at `level` (0 when it is not a receiver there).
uint32_t tree_receive_count(uint32_t index, uint32_t level, uint32_t tiles, uint32_t fan_in);
// Hops from tile `index` to its receiver when it sends at `level`, else 0.
uint32_t tree_send_hops(uint32_t index, uint32_t level, uint32_t fan_in);

// Exact completion cycle of the tree for any n (evaluated level by level).
uint64_t tree_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce, uint32_t fan_in);
// Closed form when n = f^L: sum over l < L of
// message_cycles((f-1) f^l hops, bytes) + compute_cycles((f-1) * combine).
uint64_t full_tree_reduce_cycles(const HardwareSpec& hw, const ReduceParams& reduce, uint32_t fan_in);

// Luczynski et al., "Near-Optimal Wafer-Scale Reduce" (HPDC'24): a separate,
// coarser estimate of a reduce collective, T = max(C, E / N_links + L) + (2 T_R + 1) D.
// It models pipelined wavelet streams, not the store-and-combine trees above,
// so it is not expected to match them to the cycle.
struct Hpdc24Reduce {
  double contention_cycles = 0;  // C: the contention bound
  double element_hops = 0;       // E: elements times hops they travel
  double links = 1;              // N_links: links carrying the reduce in parallel
  double distance_hops = 0;      // L: the longest distance an element travels
  double ramp_cycles = 0;        // T_R: ramp latency, one way
  double depth = 0;              // D: depth of the collective
};
double hpdc24_reduce_cycles(const Hpdc24Reduce& reduce);

}  // namespace wafersim::oracles
