#pragma once
// One combining chain of the columns combine (ColumnCombine, moe_dispatch.h):
// when its top's sum is out, per column, for the blocks a token routes.
//
// Walked block by block, a chain costs a time per block and column, and
// almost every token of a model with many experts routes a set of a chain's
// blocks never seen before. But each of its times is a latest of sums, and
// a latest of latests is one latest, so the top's time is taken apart per
// block once (tables), and a token's then costs a few of them per routed
// block and column:
//
// - The top's head starts with the latest of every streaming block's start
//   plus the latencies above it: the latest over the unrouted blocks from
//   the lowest streaming one (a suffix, kept), or over the routed ones.
// - Its tail's wait is the latest, over pairs of blocks k <= k', of k's
//   start carried up to k', k''s time to stream, and the latencies and adds
//   above k'. Its terms split into a part of k and a part of k', and a
//   routed block only raises its own parts: unrouted pairs are kept as
//   suffixes, and pairs with a routed block are the few left.
//
// The walk stays as the reference (walked_tops), which the tests hold the
// tables to for every routed set of random chains. The tables are used only
// where a routed block's start is later than its unrouted one in every
// column, so that a block's routed term is never tied by its own unrouted
// one; the walk times any other chain.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "mapping/moe_dispatch.h"

namespace wafersim::mapping {

class CombineChain {
 public:
  // The chain's blocks from the bottom to the top, which outlive it.
  explicit CombineChain(std::vector<const ColumnCombine::Node*> bottom_up);
  ~CombineChain();

  size_t columns() const { return columns_; }
  // The top's time per column, as a span from the dispatch, with the blocks
  // at `routed` (positions from the bottom, ascending) adding their results;
  // shared experts' blocks always do.
  std::vector<Timed> tops(const std::vector<uint32_t>& routed) const;
  // The same without a copy: a kept one's, or written into `scratch`.
  const std::vector<Timed>& tops(const std::vector<uint32_t>& routed, std::vector<Timed>& scratch) const;
  // The same, walked block by block.
  std::vector<Timed> walked_tops(const std::vector<uint32_t>& routed) const;

 private:
  struct Tables;  // per column, per position: the parts of the terms and their suffixes
  const Tables* tables() const;
  void taken_apart_tops(const std::vector<uint32_t>& routed, std::vector<Timed>& out) const;

  std::vector<const ColumnCombine::Node*> nodes_;  // from the bottom
  size_t columns_ = 0;
  mutable std::once_flag built_;
  mutable std::unique_ptr<Tables> tables_;  // null if a routed start ties its unrouted one
  // A token routes top_k experts over all the layer's chains, so most chains
  // see none or one of their blocks routed: those tops are kept, [position]
  // for one block, [size] for none (blocks + 1 slots of a time per column).
  mutable std::unique_ptr<std::once_flag[]> few_built_;
  mutable std::vector<std::vector<Timed>> few_;
};

}  // namespace wafersim::mapping
