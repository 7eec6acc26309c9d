#pragma once
// The events (models/energy.h) a program set causes, counted from the tasks
// as the engine executes them but without timing them: the engine and the
// closed form run the same programs, so both backends count the same events.
// What changes from one iteration to the next is only the positions a task
// reads (its context), the experts routed and whether a message still feeds an
// iteration that runs, so each tile's program is reduced once to a handful of
// terms and an iteration costs a pass over the terms, not over the tiles.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "models/detours.h"
#include "models/energy.h"
#include "models/tile_program.h"

namespace wafersim {

class ProgramEvents {
 public:
  static constexpr uint32_t kNoClass = 0xffffffffu;
  // `detours`: the repaired wafer's extra hops (models/detours.h), which a
  // message's bytes cross as they cross its logical hops; null on a perfect
  // wafer. `tile_class[t]` is the class tile t's events are reported under (a
  // region, say), kNoClass or out of range for the last class (`classes` - 1);
  // empty: every tile in class 0.
  ProgramEvents(const ProgramSet& set, const DetourTable* detours, const std::vector<uint32_t>& tile_class = {},
                uint32_t classes = 1);

  uint32_t classes() const { return uint32_t(class_terms_.size()); }
  // Each class's events in iteration n.
  std::vector<EventCounts> iteration(uint64_t n, const IterationInputs& inputs) const;
  // Every tile's events over iterations [first, last).
  EventCounts range(uint64_t first, uint64_t last, const IterationInputs& inputs) const;
  // Each tile's events over [first, last), in tile id order (none on an idle tile).
  std::vector<EventCounts> per_tile(uint64_t first, uint64_t last, const IterationInputs& inputs) const;

 private:
  // A SkipUnlessExpert (unless) or SkipIfExpert guard, its expert resolved for the tile.
  struct Guard {
    bool unless = true;
    uint32_t moe_layer = 0, expert = 0, experts = 1;
    auto fields() const { return std::tie(unless, moe_layer, expert, experts); }
    bool operator<(const Guard& other) const { return fields() < other.fields(); }
    bool operator==(const Guard& other) const { return fields() == other.fields(); }
  };
  // How the events of one or more tasks depend on the iteration: under which
  // guards (an interned set, 0: none), for which iteration delta (a message
  // feeding an iteration past the last is not sent), and whether they are per
  // position held (stride, window, offset as task_positions reads them).
  struct TermKey {
    uint32_t guards = 0, delta = 0;
    bool per_position = false;
    uint32_t stride = 1, window = 0, offset = 0;
    auto fields() const { return std::tie(guards, delta, per_position, stride, window, offset); }
    bool operator<(const TermKey& other) const { return fields() < other.fields(); }
    bool operator==(const TermKey& other) const { return fields() == other.fields(); }
  };
  // A program's terms before a tile's parameter is known: guards and offset
  // may read it (Task::kTileParam), so one reduction serves every tile.
  struct GuardSpec {
    Guard guard;
    bool expert_is_param = false;  // the expert is the tile's parameter + guard.expert
    auto fields() const { return std::tie(guard, expert_is_param); }
    bool operator<(const GuardSpec& other) const { return fields() < other.fields(); }
    bool operator==(const GuardSpec& other) const { return fields() == other.fields(); }
  };
  struct ProgramTerm {
    std::vector<GuardSpec> guards;
    TermKey key;  // guards unset
    bool offset_is_param = false;
    EventCounts events;
    auto fields() const { return std::tie(guards, key, offset_is_param); }
  };
  struct Term {
    TermKey key;
    EventCounts events;
  };
  // Tiles with the same program, tile parameter and class: the same events.
  struct Group {
    uint32_t program = 0, param = 0, cls = 0;
    uint64_t tiles = 0;
  };
  // A class's terms that differ only in their offset, summed over its tiles:
  // `offsets` ascending, `prefix[i]` the events of the offsets before i, so a
  // context's positions over all offsets take one binary search.
  struct Bucket {
    TermKey key;  // offset unused
    std::vector<uint32_t> offsets;
    std::vector<EventCounts> prefix;  // offsets.size() + 1 entries
    bool offsets_below_stride = true;
    bool operator==(const Bucket& other) const {
      return key == other.key && offsets == other.offsets && prefix == other.prefix &&
             offsets_below_stride == other.offsets_below_stride;
    }
  };

  static std::vector<ProgramTerm> program_terms(const Program& program, const DetourTable* detours);
  // A group's terms, its parameter read: `guard_id` and `set_id` number a
  // guard and a set of guard ids (interning them, or finding them once interned).
  template <class GuardId, class SetId>
  std::vector<Term> group_terms(const Group& group, GuardId&& guard_id, SetId&& set_id) const;
  // A class's buckets arranged for iterations that route few experts: the
  // guarded buckets no routed expert touches pass as they do with none
  // routed, so their events are summed once (by the iteration delta they
  // feed); an iteration evaluates the others.
  struct RoutedIndex {
    std::vector<uint32_t> evaluated;                              // unguarded or per position: every iteration
    std::vector<std::pair<uint32_t, EventCounts>> unrouted_sums;  // (delta, events) passing with no expert routed
    struct Experts {
      uint32_t count = 0;  // of the layer's experts named by a guard here, the highest plus one
      // [expert]: the guarded buckets whose guards name it and more than
      // one other expert, or a range of them: evaluated when it is routed.
      std::vector<std::vector<uint32_t>> shared_buckets;
      // The other guarded buckets, whose guards name one expert or two: what
      // routing them changes of what the unrouted sums counted, as one
      // change per expert, and for two experts routed together what that
      // adds (both routed, less each alone, plus neither).
      struct Change {
        uint32_t delta = 0;
        EventCounts events;
      };
      struct PairChange {
        uint32_t other = 0, delta = 0;  // other > the expert it is listed under
        EventCounts events;
      };
      std::vector<std::vector<Change>> own_change;       // [expert]
      std::vector<std::vector<PairChange>> pair_change;  // [expert]
      // The buckets that pass when their own expert is not routed and one
      // of those after it up to an end is (guards `if e` and `unless [e + 1,
      // end)`: a combining chain's forwarding), by (end, delta): their
      // experts ascending and the sums of their events up to each.
      struct Forwarding {
        uint32_t end = 0, delta = 0;
        std::vector<std::pair<uint32_t, EventCounts>> collected;  // (expert, events) as found, until summed
        std::vector<uint32_t> experts;
        std::vector<EventCounts> prefix;  // experts.size() + 1
      };
      std::vector<Forwarding> forwarding;
    };
    std::map<uint32_t, Experts> experts;  // by MoE layer
    std::vector<char> passes_unrouted;    // [bucket]: a guarded one the unrouted sums count
  };
  RoutedIndex routed_index(const std::vector<Bucket>& buckets) const;
  // A bucket whose guards (`set`) name one or two experts of a layer, each
  // alone, as what routing each changes and what routing both adds.
  void add_named_change(RoutedIndex::Experts& layer, const std::vector<uint32_t>& set, std::vector<uint32_t> named,
                        uint32_t delta, const EventCounts& events) const;
  // A bucket that is a chain's forwarding (RoutedIndex::Experts::Forwarding) joins its chain's; false if not one.
  bool add_forwarding(RoutedIndex& index, const std::vector<uint32_t>& set, uint32_t delta,
                      const EventCounts& events) const;
  bool passes_unrouted(uint32_t guards) const;
  EventCounts class_events(uint32_t c, uint64_t n, const IterationInputs& inputs, std::vector<int8_t>& cache) const;
  bool guards_pass(uint32_t guards, uint64_t n, const IterationInputs& inputs, std::vector<int8_t>& cache) const;
  EventCounts term_events(const TermKey& key, const EventCounts& events, uint64_t n, const IterationInputs& inputs,
                          std::vector<int8_t>& cache) const;
  EventCounts bucket_events(const Bucket& bucket, uint64_t n, const IterationInputs& inputs,
                            std::vector<int8_t>& cache) const;

  uint64_t iterations_ = 0;
  std::vector<std::vector<ProgramTerm>> program_terms_;  // per program of the set
  std::vector<Guard> guards_;
  std::vector<std::vector<uint32_t>> guard_sets_;  // [0] is the empty set
  std::map<Guard, uint32_t> guard_ids_;
  std::map<std::vector<uint32_t>, uint32_t> set_ids_;
  std::vector<Group> groups_;
  std::vector<uint32_t> tile_group_;  // per tile, or kNoClass for an idle tile
  std::vector<std::vector<Bucket>> class_terms_;
  // The first class with the same terms: classes alike (layers of one shape)
  // are counted once per iteration.
  std::vector<uint32_t> same_as_;
  std::vector<RoutedIndex> routed_index_;  // per class
};

}  // namespace wafersim
