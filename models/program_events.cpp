#include "models/program_events.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "models/dtype.h"
#include "models/route.h"

namespace wafersim {

namespace {

EventCounts work_events(const Work& work, Dtype dtype) {
  EventCounts out;
  switch (dtype_compute_bits(dtype)) {
    case 32: out.flops_32bit = work.flops; break;
    case 16: out.flops_16bit = work.flops; break;
    default: out.flops_8bit = work.flops; break;
  }
  out.sram_read_bytes = work.read_bytes;
  out.sram_write_bytes = work.write_bytes;
  return out;
}

// The mesh links a message of `hops` logical hops crosses: its route's hops and
// the detour the timing charges it (message_cycles, models/cost.h).
uint64_t links_crossed(const DetourTable* detours, uint32_t hops) {
  return uint64_t(hops) + (detours ? detours->of(hops) : 0);
}

bool reads_tile_param(const Program& program) {
  for (const Task& task : program.tasks)
    if (task.kv_offset == Task::kTileParam || task.expert == Task::kTileParam) return true;
  return false;
}

}  // namespace

// The tasks in order, as the engine runs them: a skip task covers the next
// `count` tasks (skip tasks among them included), so a task runs when every
// guard still open above it passes.
std::vector<ProgramEvents::ProgramTerm> ProgramEvents::program_terms(const Program& program,
                                                                     const DetourTable* detours) {
  std::vector<ProgramTerm> terms;
  auto add = [&terms](ProgramTerm term) {
    if (term.events == EventCounts{}) return;
    for (ProgramTerm& existing : terms)
      if (existing.fields() == term.fields()) {
        existing.events += term.events;
        return;
      }
    terms.push_back(std::move(term));
  };
  std::vector<std::pair<GuardSpec, uint32_t>> open;  // guard, tasks it still covers
  for (const Task& task : program.tasks) {
    ProgramTerm term;
    for (const auto& [guard, left] : open) term.guards.push_back(guard);
    std::sort(term.guards.begin(), term.guards.end());
    switch (task.op) {
      case TaskOp::Compute: {
        term.events = work_events(task.work, task.dtype);
        add(term);
        if (task.work_per_position == Work{}) break;
        term.key.per_position = true;
        term.key.stride = task.kv_stride;
        term.key.window = task.kv_window;
        term.offset_is_param = task.kv_offset == Task::kTileParam;
        term.key.offset = term.offset_is_param ? 0 : task.kv_offset;
        term.events = work_events(task.work_per_position, task.dtype);
        add(term);
        break;
      }
      case TaskOp::Send:
        term.key.delta = task.iteration_delta;
        if (task.dwafer != 0)
          term.events.offwafer_bytes = task.bytes;
        else
          term.events.link_byte_hops = uint64_t(task.bytes) * links_crossed(detours, send_route(task).hops());
        if (task.stream) term.events += work_events(task.work, task.dtype);  // it combines on the way
        add(term);
        break;
      case TaskOp::Multicast:
        term.key.delta = task.iteration_delta;
        // The last of the `count` tiles is the farthest: the body crosses its route's links (both ways from one
        // injection when the task has tiles behind it too).
        term.events.link_byte_hops =
            uint64_t(task.bytes) *
            (links_crossed(detours, task.count) + (task.count_back > 0 ? links_crossed(detours, task.count_back) : 0));
        add(term);
        break;
      default: break;
    }
    for (auto& entry : open) --entry.second;
    open.erase(std::remove_if(open.begin(), open.end(), [](const auto& entry) { return entry.second == 0; }),
               open.end());
    if ((task.op == TaskOp::SkipUnlessExpert || task.op == TaskOp::SkipIfExpert) && task.count > 0) {
      GuardSpec spec;
      spec.expert_is_param = task.expert == Task::kTileParam;
      spec.guard = {task.op == TaskOp::SkipUnlessExpert, task.moe_layer,
                    spec.expert_is_param ? task.expert_offset : task.expert, task.experts};
      open.push_back({spec, task.count});
    }
  }
  return terms;
}

template <class GuardId, class SetId>
std::vector<ProgramEvents::Term> ProgramEvents::group_terms(const Group& group, GuardId&& guard_id,
                                                            SetId&& set_id) const {
  std::vector<Term> out;
  for (const ProgramTerm& term : program_terms_[group.program]) {
    Term resolved{term.key, term.events};
    if (term.offset_is_param) resolved.key.offset = group.param;
    if (!term.guards.empty()) {
      std::vector<uint32_t> ids;
      for (const GuardSpec& spec : term.guards) {
        Guard guard = spec.guard;
        if (spec.expert_is_param) guard.expert += group.param;
        ids.push_back(guard_id(guard));
      }
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      resolved.key.guards = set_id(ids);
    }
    out.push_back(resolved);
  }
  return out;
}

ProgramEvents::ProgramEvents(const ProgramSet& set, const DetourTable* detours, const std::vector<uint32_t>& tile_class,
                             uint32_t classes)
    : iterations_(set.iterations), guard_sets_(1) {
  if (classes == 0) classes = 1;
  std::vector<bool> uses_param;
  for (const Program& program : set.programs) {
    program_terms_.push_back(program_terms(program, detours));
    uses_param.push_back(reads_tile_param(program));
  }

  // Tiles by (program, parameter, class), groups numbered as first met in tile
  // order. A map of the groups per program, not a sorted record per tile: a
  // multi-wafer plan has millions of tiles, and millions of groups where each
  // attention tile reads its own positions (its parameter).
  using Groups = std::map<std::pair<uint32_t, uint32_t>, uint32_t>;
  std::vector<Groups> group_of(set.programs.size());
  // Along a row of tiles a program's parameters mostly rise: each lookup
  // starts where the program's last one ended.
  std::vector<Groups::iterator> after_last(set.programs.size());
  for (size_t p = 0; p < group_of.size(); ++p) after_last[p] = group_of[p].end();
  tile_group_.assign(set.tile_program.size(), kNoClass);
  for (uint64_t tile = 0; tile < set.tile_program.size(); ++tile) {
    const uint32_t program = set.tile_program[tile];
    if (program == ProgramSet::kIdle) continue;
    const uint32_t param = uses_param[program] && !set.tile_param.empty() ? set.tile_param[tile] : 0;
    uint32_t cls = tile < tile_class.size() ? tile_class[tile] : 0;
    if (cls >= classes) cls = classes - 1;
    Groups& groups = group_of[program];
    const size_t before = groups.size();
    const auto entry = groups.try_emplace(after_last[program], {param, cls}, uint32_t(groups_.size()));
    after_last[program] = std::next(entry);
    if (groups.size() > before) groups_.push_back({program, param, cls, 0});
    ++groups_[entry->second].tiles;
    tile_group_[tile] = entry->second;
  }

  // Each class's terms over its tiles, those that differ only in offset in one bucket.
  auto intern_guard = [this](const Guard& guard) {
    const auto [entry, added] = guard_ids_.try_emplace(guard, uint32_t(guards_.size()));
    if (added) guards_.push_back(guard);
    return entry->second;
  };
  auto intern_set = [this](const std::vector<uint32_t>& ids) {
    const auto [entry, added] = set_ids_.try_emplace(ids, uint32_t(guard_sets_.size()));
    if (added) guard_sets_.push_back(ids);
    return entry->second;
  };
  std::vector<std::map<TermKey, std::map<uint32_t, EventCounts>>> buckets(classes);
  for (const Group& group : groups_)
    for (const Term& term : group_terms(group, intern_guard, intern_set)) {
      TermKey key = term.key;
      key.offset = 0;
      buckets[group.cls][key][term.key.offset] += term.events * group.tiles;
    }
  class_terms_.resize(classes);
  for (uint32_t c = 0; c < classes; ++c)
    for (const auto& [key, by_offset] : buckets[c]) {
      Bucket bucket;
      bucket.key = key;
      bucket.prefix.push_back({});
      for (const auto& [offset, events] : by_offset) {
        bucket.offsets.push_back(offset);
        bucket.prefix.push_back(bucket.prefix.back() + events);
        if (offset >= key.stride) bucket.offsets_below_stride = false;
      }
      class_terms_[c].push_back(std::move(bucket));
    }
  std::vector<uint32_t> distinct;
  for (uint32_t c = 0; c < classes; ++c) {
    auto same =
        std::find_if(distinct.begin(), distinct.end(), [&](uint32_t d) { return class_terms_[d] == class_terms_[c]; });
    same_as_.push_back(same != distinct.end() ? *same : c);
    if (same == distinct.end()) distinct.push_back(c);
  }
  for (uint32_t c = 0; c < classes; ++c) routed_index_.push_back(routed_index(class_terms_[c]));
}

bool ProgramEvents::passes_unrouted(uint32_t guards) const {
  for (uint32_t id : guard_sets_[guards])
    if (guards_[id].unless) return false;
  return true;
}

void ProgramEvents::add_named_change(RoutedIndex::Experts& layer, const std::vector<uint32_t>& set,
                                     std::vector<uint32_t> named, uint32_t delta, const EventCounts& events) const {
  std::sort(named.begin(), named.end());
  // What the bucket gives with the named experts routed as `routed` says (bit k: named[k]).
  auto gives = [&](unsigned routed) {
    for (uint32_t id : set) {
      const Guard& guard = guards_[id];
      const size_t k = size_t(std::find(named.begin(), named.end(), guard.expert) - named.begin());
      if (bool(routed >> k & 1) != guard.unless) return EventCounts{};
    }
    return events;
  };
  if (layer.own_change.size() <= named.back()) {
    layer.own_change.resize(named.back() + 1);
    layer.pair_change.resize(named.back() + 1);
  }
  const EventCounts neither = gives(0);
  for (size_t k = 0; k < named.size(); ++k) {
    std::vector<RoutedIndex::Experts::Change>& own = layer.own_change[named[k]];
    auto at = std::find_if(own.begin(), own.end(), [&](const auto& c) { return c.delta == delta; });
    if (at == own.end()) at = own.insert(own.end(), {delta, EventCounts{}});
    at->events += gives(1u << k);
    at->events -= neither;
  }
  if (named.size() < 2) return;
  std::vector<RoutedIndex::Experts::PairChange>& pairs = layer.pair_change[named[0]];
  auto at =
      std::find_if(pairs.begin(), pairs.end(), [&](const auto& c) { return c.other == named[1] && c.delta == delta; });
  if (at == pairs.end()) at = pairs.insert(pairs.end(), {named[1], delta, EventCounts{}});
  at->events += gives(3);
  at->events -= gives(1);
  at->events -= gives(2);
  at->events += neither;
}

bool ProgramEvents::add_forwarding(RoutedIndex& index, const std::vector<uint32_t>& set, uint32_t delta,
                                   const EventCounts& events) const {
  if (set.size() != 2) return false;
  const Guard& a = guards_[set[0]];
  const Guard& b = guards_[set[1]];
  const Guard& own = a.unless ? b : a;
  const Guard& after = a.unless ? a : b;
  if (own.unless || !after.unless || own.experts != 1 || own.moe_layer != after.moe_layer ||
      after.expert != own.expert + 1)
    return false;
  std::vector<RoutedIndex::Experts::Forwarding>& chains = index.experts[own.moe_layer].forwarding;
  const uint32_t end = after.expert + after.experts;
  auto at = std::find_if(chains.begin(), chains.end(), [&](const auto& f) { return f.end == end && f.delta == delta; });
  if (at == chains.end()) at = chains.insert(chains.end(), {end, delta, {}, {}, {}});
  at->collected.emplace_back(own.expert, events);
  return true;
}

ProgramEvents::RoutedIndex ProgramEvents::routed_index(const std::vector<Bucket>& buckets) const {
  RoutedIndex index;
  index.passes_unrouted.assign(buckets.size(), 0);
  std::map<uint32_t, EventCounts> by_delta;
  for (uint32_t b = 0; b < buckets.size(); ++b) {
    const TermKey& key = buckets[b].key;
    if (key.guards == 0 || key.per_position) {
      index.evaluated.push_back(b);
      continue;
    }
    const EventCounts& events = buckets[b].prefix.back();
    index.passes_unrouted[b] = passes_unrouted(key.guards);
    if (index.passes_unrouted[b]) by_delta[key.delta] += events;
    const std::vector<uint32_t>& set = guard_sets_[key.guards];
    // The experts its guards name, and whether they name each alone, all of one layer.
    std::vector<uint32_t> named;
    bool alone = true;
    for (uint32_t id : set) {
      const Guard& guard = guards_[id];
      RoutedIndex::Experts& layer = index.experts[guard.moe_layer];
      layer.count = std::max(layer.count, guard.expert + guard.experts);
      alone = alone && guard.experts == 1 && guard.moe_layer == guards_[set.front()].moe_layer;
      if (std::find(named.begin(), named.end(), guard.expert) == named.end()) named.push_back(guard.expert);
    }
    if (alone && named.size() <= 2) {
      add_named_change(index.experts[guards_[set.front()].moe_layer], set, std::move(named), key.delta, events);
      continue;
    }
    if (add_forwarding(index, set, key.delta, events)) continue;
    for (uint32_t id : set) {
      const Guard& guard = guards_[id];
      std::vector<std::vector<uint32_t>>& of_expert = index.experts[guard.moe_layer].shared_buckets;
      if (of_expert.size() < guard.expert + guard.experts) of_expert.resize(guard.expert + guard.experts);
      for (uint32_t e = guard.expert; e < guard.expert + guard.experts; ++e) of_expert[e].push_back(b);
    }
  }
  index.unrouted_sums.assign(by_delta.begin(), by_delta.end());
  for (auto& [moe_layer, layer] : index.experts)
    for (RoutedIndex::Experts::Forwarding& f : layer.forwarding) {
      std::sort(f.collected.begin(), f.collected.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      f.prefix.assign(1, EventCounts{});
      for (const auto& [expert, events] : f.collected) {
        if (!f.experts.empty() && f.experts.back() == expert) {
          f.prefix.back() += events;
          continue;
        }
        f.experts.push_back(expert);
        f.prefix.push_back(f.prefix.back() + events);
      }
      f.collected.clear();
      f.collected.shrink_to_fit();
    }
  return index;
}

EventCounts ProgramEvents::class_events(uint32_t c, uint64_t n, const IterationInputs& inputs,
                                        std::vector<int8_t>& cache) const {
  const std::vector<Bucket>& buckets = class_terms_[c];
  const RoutedIndex& index = routed_index_[c];
  EventCounts out;
  for (uint32_t b : index.evaluated) out += bucket_events(buckets[b], n, inputs, cache);
  for (const auto& [delta, events] : index.unrouted_sums)
    if (n + delta < iterations_) out += events;
  thread_local std::vector<uint32_t> routed, touched;
  touched.clear();
  for (const auto& [moe_layer, layer] : index.experts) {
    inputs.routed_experts(n, moe_layer, layer.count, routed);
    for (uint32_t expert : routed) {
      if (expert < layer.own_change.size()) {
        for (const RoutedIndex::Experts::Change& change : layer.own_change[expert])
          if (n + change.delta < iterations_) out += change.events;
        for (const RoutedIndex::Experts::PairChange& change : layer.pair_change[expert])
          if (n + change.delta < iterations_ && std::binary_search(routed.begin(), routed.end(), change.other))
            out += change.events;
      }
      if (expert < layer.shared_buckets.size())
        touched.insert(touched.end(), layer.shared_buckets[expert].begin(), layer.shared_buckets[expert].end());
    }
    // A chain's forwarding passes at its experts before the last routed one before its end, less the routed.
    for (const RoutedIndex::Experts::Forwarding& f : layer.forwarding) {
      if (n + f.delta >= iterations_) continue;
      const auto last = std::lower_bound(routed.begin(), routed.end(), f.end);
      if (last == routed.begin()) continue;
      const uint32_t deepest = *std::prev(last);
      const size_t before = size_t(std::lower_bound(f.experts.begin(), f.experts.end(), deepest) - f.experts.begin());
      out += f.prefix[before];
      for (auto r = routed.begin(); r != last && *r < deepest; ++r) {
        const auto at = std::lower_bound(f.experts.begin(), f.experts.end(), *r);
        if (at == f.experts.end() || *at != *r) continue;
        const size_t i = size_t(at - f.experts.begin());
        out -= f.prefix[i + 1];
        out += f.prefix[i];
      }
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  // A routed expert may change whether these pass: take out what the sums counted, count what they give.
  for (uint32_t b : touched) {
    const Bucket& bucket = buckets[b];
    if (index.passes_unrouted[b] && n + bucket.key.delta < iterations_) out -= bucket.prefix.back();
    out += bucket_events(bucket, n, inputs, cache);
  }
  return out;
}

bool ProgramEvents::guards_pass(uint32_t guards, uint64_t n, const IterationInputs& inputs,
                                std::vector<int8_t>& cache) const {
  for (uint32_t id : guard_sets_[guards]) {
    if (cache[id] < 0) {
      const Guard& g = guards_[id];
      const bool routed = inputs.any_expert_routed(n, g.moe_layer, g.expert, g.experts);
      cache[id] = routed == g.unless ? 1 : 0;
    }
    if (cache[id] == 0) return false;
  }
  return true;
}

EventCounts ProgramEvents::term_events(const TermKey& key, const EventCounts& events, uint64_t n,
                                       const IterationInputs& inputs, std::vector<int8_t>& cache) const {
  if (n + key.delta >= iterations_ || !guards_pass(key.guards, n, inputs, cache)) return {};
  if (!key.per_position) return events;
  uint64_t context = inputs.context(n);
  if (key.window > 0 && context > key.window) context = key.window;  // as task_positions reads it
  return events * positions_held(context, key.stride, key.offset);
}

EventCounts ProgramEvents::bucket_events(const Bucket& b, uint64_t n, const IterationInputs& inputs,
                                         std::vector<int8_t>& cache) const {
  const TermKey& key = b.key;
  if (n + key.delta >= iterations_ || !guards_pass(key.guards, n, inputs, cache)) return {};
  if (!key.per_position) return b.prefix.back();
  uint64_t context = inputs.context(n);
  if (key.window > 0 && context > key.window) context = key.window;  // as task_positions reads it
  if (b.offsets_below_stride) {
    // With context = q * stride + r, an offset o < stride holds q positions, and one more when o < r.
    const uint64_t q = context / key.stride, r = context % key.stride;
    const size_t below = size_t(std::lower_bound(b.offsets.begin(), b.offsets.end(), r) - b.offsets.begin());
    return b.prefix.back() * q + b.prefix[below];
  }
  EventCounts out;
  for (size_t i = 0; i < b.offsets.size(); ++i) {
    const EventCounts& before = b.prefix[i];
    const EventCounts& upto = b.prefix[i + 1];
    const EventCounts one{upto.flops_32bit - before.flops_32bit,
                          upto.flops_16bit - before.flops_16bit,
                          upto.flops_8bit - before.flops_8bit,
                          upto.sram_read_bytes - before.sram_read_bytes,
                          upto.sram_write_bytes - before.sram_write_bytes,
                          upto.link_byte_hops - before.link_byte_hops,
                          upto.offwafer_bytes - before.offwafer_bytes};
    out += one * positions_held(context, key.stride, b.offsets[i]);
  }
  return out;
}

std::vector<EventCounts> ProgramEvents::iteration(uint64_t n, const IterationInputs& inputs) const {
  std::vector<int8_t> cache(guards_.size(), -1);
  std::vector<EventCounts> out(class_terms_.size());
  for (size_t c = 0; c < class_terms_.size(); ++c) {
    if (same_as_[c] != c) {
      out[c] = out[same_as_[c]];
      continue;
    }
    out[c] = class_events(uint32_t(c), n, inputs, cache);
  }
  return out;
}

EventCounts ProgramEvents::range(uint64_t first, uint64_t last, const IterationInputs& inputs) const {
  EventCounts out;
  for (uint64_t n = first; n < last; ++n)
    for (const EventCounts& events : iteration(n, inputs)) out += events;
  return out;
}

std::vector<EventCounts> ProgramEvents::per_tile(uint64_t first, uint64_t last, const IterationInputs& inputs) const {
  // Every guard and set was interned when the classes were summed: find them again.
  auto guard_id = [this](const Guard& guard) { return guard_ids_.at(guard); };
  auto set_id = [this](const std::vector<uint32_t>& ids) { return set_ids_.at(ids); };
  std::vector<std::vector<Term>> terms;
  for (const Group& group : groups_) terms.push_back(group_terms(group, guard_id, set_id));
  std::vector<EventCounts> per_group(groups_.size());
  for (uint64_t n = first; n < last; ++n) {
    std::vector<int8_t> cache(guards_.size(), -1);
    for (size_t g = 0; g < groups_.size(); ++g)
      for (const Term& term : terms[g]) per_group[g] += term_events(term.key, term.events, n, inputs, cache);
  }
  std::vector<EventCounts> out(tile_group_.size());
  for (size_t tile = 0; tile < tile_group_.size(); ++tile)
    if (tile_group_[tile] != kNoClass) out[tile] = per_group[tile_group_[tile]];
  return out;
}

}  // namespace wafersim
