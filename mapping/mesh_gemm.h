#pragma once
// MeshGEMM: a prefill projection as a GEMM tiled over the region's mesh
// (mapping.prefill_gemm: meshgemm), after WaferLLM's MeshGEMM (He et al.,
// OSDI'25, arXiv:2502.04563): cyclic shifts between neighbours along both
// axes, each ring interleaved so that a shift is at most 2 hops, no global
// broadcast and no reduction tree.
//
// The chunk's activations arrive, as in decode, as slices on one line of the
// block (the root column or the root row: the "input line"); the step hands
// its fp32 sums on as slices on the other line, so it replaces a decode GEMV
// step of the same orientation without changing its neighbours:
//   from_column = true:  Front::Column -> Front::Row   (in place of gemv_to_row_step)
//   from_column = false: Front::Row    -> Front::Column (in place of gemv_row_to_column_step)
// Weight-stationary: every tile keeps the weight block it holds in decode,
// so the weights are never moved. Along the input line's axis a tile's
// input slice is multicast over its line (the scatter into 2D blocks); then
// the token blocks of the input circulate on that line's ring while the fp32
// partial sums of the output circulate on the rings across it, every tile
// adding its weight block's product to the partial that passes; last, the
// finished blocks are gathered to the output line (a gather tree). Each tile
// sees every token once, so its arithmetic is the decode GEMV's times the
// chunk, exactly as the chunked GEMV's.
//
// The engine gets the rounds as an aggregate per tile (docs/MAPPING.md,
// "Prefill"): one Compute of the first round (the pipeline's fill), one Send
// of all rounds' input blocks to the ring successor on the line, one Send of
// all rounds' partials to the successor across, one Compute of the remaining
// rounds, and the two Waits. The closed form (latency()) times the same
// programs; both pay a message's fixed latency once instead of once per round.
#include <memory>

#include "mapping/steps.h"

namespace wafersim::mapping {

// The same GEMM as the decode GEMV it replaces, with the same partitions: to
// the root row (from_column) or to the root column from the root row.
class MeshGemmStep : public Step {
 public:
  MeshGemmStep(const StepEnv& env, bool from_column, uint32_t ring_block_tokens)
      : Step(env), from_column_(from_column), ring_block_tokens_(ring_block_tokens) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  bool from_column() const { return from_column_; }
  // The fp32 partial sums circulate on the interleaved ring along the line
  // (interleaved_ring_next) instead of a tree. The chunk's tokens form blocks
  // of this many; block b's sums start at the ring successor of position b and
  // finish at b, which the gather tree then collects.
  uint32_t ring_block_tokens() const { return ring_block_tokens_; }

 private:
  bool from_column_;
  uint32_t ring_block_tokens_;
};

std::unique_ptr<Step> mesh_gemm_step(const StepEnv& env, const GemvShape& shape, bool from_column);

// Position after `p` on an interleaved ring of `n` tiles along a line
// (0, 2, 4, ..., then the odd positions back down to 1): never more than 2 hops.
uint32_t interleaved_ring_next(uint32_t p, uint32_t n);

}  // namespace wafersim::mapping
