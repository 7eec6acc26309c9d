#pragma once
// One sequence's decode passes through a plan with MoE layers, each in time
// independent of the regions' sizes: the closed form's shortcut where every
// token routes anew (mapping/timeline.cpp), so that no pass repeats another.
//
// Every figure of a pass is a latest or a sum of times, and a latest of
// latests is one latest. So each figure a region passes on (its finish, its
// root's and root-column tiles' last times, and what the next region's head
// steps make of its slices: its last slice's arrival and its root's time) is
// the latest of that figure over the parts of the region's output, each
// shifted to when its part starts. An MoE layer's parts are the combine's
// (CombineParts): its base, and each column of each chain's top, at the
// chain's time for the token's routing; any other region's output is one
// part. Each part's figures are timed once, by the steps themselves, and a
// token then costs a few figures per chain, not a time per tile.
//
// The head steps end on a streamed reduce, whose root's time is the latest of
// its streams' heads, then the wait for the latest of their tails: both are
// latests, taken apart alike (GatherStep::heads_at_root).
//
// A latest breaks a tie by the order of the tiles and pieces, which a part's
// figure does not show. Where two parts tie with different critical paths,
// the two are timed together once, by the steps, to see which the order
// favours. The first passes are checked against run_pass too.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "mapping/kept_by_key.h"
#include "mapping/moe_dispatch.h"
#include "mapping/pipeline_pass.h"
#include "mapping/plan.h"
#include "mapping/region_spans.h"

namespace wafersim::mapping {

class RoutedPasses {
 public:
  // Null unless the plan is one this covers: a decode whose regions are each
  // timed by a table or independent of the iteration, whose MoE layers use
  // the columns combine followed by steps on the root column alone, and
  // whose regions that take slices start with head steps that end on a
  // reduce or gather to the root and do not read the context.
  static std::unique_ptr<RoutedPasses> of(const Plan& plan, const PlanSpans& spans, const SendCycles& sends);

  // Iteration n's pass, its input reaching the first region at `arrival`
  // with every server done before it: its start, finish, exit and
  // after_latest_cycle (no servers). Nullopt if this plan's passes must be
  // left to run_pass after all.
  std::optional<Pass> pass(const IterationInputs& inputs, uint64_t n, const Timed& arrival);

 private:
  // A figure of a part, from the part's start; `unit`: the MoE layer's unit
  // part it comes from (0 the base, then each chain's top's columns);
  // `unbroken`: it tied with another whose order tie_winner could not tell.
  struct Figure {
    bool present = false, unbroken = false;
    uint32_t unit = 0;
    Timed at;
  };
  enum : size_t { kFinish, kRoot, kLines, kNextStart, kNextHeads, kNextEnd, kFigures };
  // The region's finish, root and root-column tiles' last (a cycle); the next
  // region's last slice (a cycle), its head steps' heads and root (a cycle).
  using Reach = std::array<Figure, kFigures>;

  struct Parts {
    const CombineParts* combine = nullptr;  // an MoE layer's
    size_t combine_step = 0;
    bool prepared = false;                                            // the figures below are timed
    Reach base;                                                       // from a dispatch at 0
    std::vector<std::vector<Reach>> columns;                          // [chain][column]: from its top's time there
    std::vector<uint32_t> first_unit;                                 // [chain]: its column 0's unit
    std::vector<Reach> unrouted;                                      // [chain], from a dispatch at 0
    std::vector<std::optional<Reach>> one_block;                      // [block]: its chain's, it alone routed
    std::vector<KeptByKey<Reach>> routed;                             // [chain]: packed key -> reach
    std::vector<std::map<std::vector<uint32_t>, Reach>> routed_long;  // [chain]: keys too long to pack
    std::unordered_map<uint64_t, uint32_t> tie_winners;    // packed (figure, lower unit, higher unit) -> unit
    std::unordered_map<const RegionSpan*, Reach> by_span;  // a region with a table
    std::optional<Reach> fixed;                            // a region without one
  };

  RoutedPasses(const Plan& plan, const PlanSpans& spans, const SendCycles& sends);
  // Parts are timed as a pass needs them, by steps run with its inputs
  // (inputs_, iteration_), which only exact_reach's may read (of() checked
  // it, and a step that reads them disables the shortcut).
  //
  // The figures of region r's output `out` (its root-column tiles' last
  // times `line_done`), timed from kFar.
  Reach reach_of(size_t r, const Front& out, const std::vector<Timed>& line_done);
  // An MoE layer's part (CombineParts::assemble) from a dispatch at `dispatch`.
  Reach combine_part(size_t r, const Timed& dispatch, bool base, const std::vector<std::vector<Timed>>& tops);
  void prepare_combine(size_t r);
  // A chain's part with the blocks of `key` routed, from a dispatch at 0.
  const Reach& chain_reach(size_t r, size_t chain, const std::vector<uint32_t>& key);
  // Any other region's output, from its root's start.
  const Reach& region_reach(size_t r, const RegionSpan* span);
  // An MoE layer's output for the iteration's routing as one part, timed in
  // full from the dispatch: where a tie between its parts cannot be broken.
  Reach exact_reach(size_t r);
  // MoE layer r's output for iteration_'s routing, from the dispatch: its
  // parts' latest, or exact_reach.
  Reach layer_reach(size_t r);
  // The same for iteration n, taken for a block of iterations at a time,
  // layer by layer: a layer's kept figures and its chains' tables stay in
  // cache over the block, where an iteration at a time through every layer
  // finds them gone.
  const Reach& blocked_layer_reach(size_t r, uint64_t n);

  // `into` the later of itself and `part` shifted by `by` (null: as it is), figure by figure, for region r.
  void take(size_t r, Reach& into, const Reach& part, const Timed* by = nullptr);
  // Which of two of region r's unit parts a tie at figure f goes to (UINT32_MAX: neither shows it).
  uint32_t tie_winner(size_t r, size_t f, uint32_t a, uint32_t b);

  const Plan& plan_;
  const PlanSpans& spans_;
  const SendCycles& sends_;
  const IterationInputs* inputs_ = nullptr;  // the pass's, for parts timed while it runs
  uint64_t iteration_ = 0;
  std::vector<Parts> parts_;                 // [region]
  std::vector<std::vector<uint32_t>> keys_;  // chain_keys' scratch
  std::vector<size_t> layer_slot_;           // [region]: its place among the MoE layers (SIZE_MAX: not one)
  uint64_t block_first_ = UINT64_MAX;        // the first iteration of the block in block_
  std::vector<Reach> block_;                 // [slot * kBlockIterations + iteration - block_first_]
  uint64_t checked_ = 0;                     // passes compared with run_pass
  bool disabled_ = false;                    // one differed, or a step read the inputs: run_pass times them all
};

}  // namespace wafersim::mapping
