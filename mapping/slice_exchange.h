#pragma once
// A prefill's grid attention under decode's groups (mapping.prefill_attention:
// grid with mapping.attention: groups): the weights stay where decode keeps
// them, so W_QKV leaves each column the slice decode's groups order gives it
// and W_O takes its input in that order, while the grid needs every column of
// a KV head to hold one run of head dimensions of all the head's q, k and v
// (grid_attention.h). This step re-cuts the chunk's slices between the two
// orders within each KV head's columns of the root row (Front::Row to
// Front::Row): to the grid before attention, back to the groups after it.
//
// Each KV head's columns (the grid's groups, which decode's copies of a head
// share) exchange the chunk's slices in three moves, each free of shared
// links by construction: every root-row tile multicasts its chunk's slice
// down its column; row i re-cuts the tokens t with t mod rows == i (at most
// ceil(chunk / rows) of them) on the interleaved ring along the line's
// columns (mesh_gemm.h: a shift goes at most 2 hops and no two shifts share a
// link), every column owing every other about 1/n of its part, so each
// forwards (n - 1) / 2 of it; and the rows' re-cut parts go round the
// interleaved ring down each column (each tile forwards all but its
// successor's part), which leaves the root row with the chunk's re-cut
// slices. Spreading the re-cut over the rows keeps the bytes on a link near
// the chunk's slice twice over, where one ring on the root row would carry
// (n - 1) / 2 of it. As MeshGEMM's rings, each ring is one aggregate per tile
// (one Send of all rounds' bytes to the successor, one Wait for the
// predecessor's), which pays a message's fixed latency once instead of once a
// round (under-estimates a ring of n by at most n - 2 two-hop latencies) and
// lets a tile go on once its predecessor's bytes are in, not once the
// farthest part has come round. Putting received elements in place is not
// charged.
#include <memory>

#include "mapping/steps.h"

namespace wafersim::mapping {

class SliceExchangeStep : public Step {
 public:
  SliceExchangeStep(const StepEnv& env, bool to_grid, const KvGroups& decode_groups)
      : Step(env),
        to_grid_(to_grid),
        decode_groups_(decode_groups),
        lines_(decode_groups.kv_heads(), decode_groups.query_heads(), env.geo.cols) {}
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
  // To the grid's order (q/k/v before attention) or back to decode's (the
  // attention output before W_O).
  bool to_grid() const { return to_grid_; }
  // Decode's attention groups, whose order the slices leave W_QKV in and W_O takes them in.
  const KvGroups& decode_groups() const { return decode_groups_; }
  // The grid's groups (one per KV head, or per run of them): the lines along which columns exchange.
  const KvGroups& lines() const { return lines_; }

 private:
  bool to_grid_;
  KvGroups decode_groups_, lines_;
};

// `slice_bytes`: one token's slice of the largest column; `kv_heads` and
// `query_heads` with `decode_copies` give decode's groups, and the grid's
// (one group per KV head, or per run of them) are the exchange's lines.
std::unique_ptr<Step> slice_exchange_step(const StepEnv& env, bool to_grid, uint32_t kv_heads, uint32_t query_heads,
                                          uint32_t decode_copies, uint64_t slice_bytes);

}  // namespace wafersim::mapping
