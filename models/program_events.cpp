#include "models/program_events.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "models/dtype.h"

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

bool reads_tile_param(const Program& program) {
  for (const Task& task : program.tasks)
    if (task.kv_offset == Task::kTileParam || task.expert == Task::kTileParam) return true;
  return false;
}

uint32_t resolved(uint32_t field, uint32_t param, uint32_t plus = 0) {
  return field == Task::kTileParam ? param + plus : field;
}

}  // namespace

uint32_t ProgramEvents::intern_guards(std::vector<uint32_t> guards) {
  std::sort(guards.begin(), guards.end());
  guards.erase(std::unique(guards.begin(), guards.end()), guards.end());
  const auto [entry, added] = set_ids_.try_emplace(guards, uint32_t(guard_sets_.size()));
  if (added) guard_sets_.push_back(std::move(guards));
  return entry->second;
}

// The tasks in order, as the engine runs them: a skip task covers the next
// `count` tasks (skip tasks among them included), so a task runs when every
// guard still open above it passes.
std::vector<ProgramEvents::Term> ProgramEvents::program_terms(const Program& program, uint32_t param) {
  std::map<TermKey, EventCounts> terms;
  std::vector<std::pair<uint32_t, uint32_t>> open;  // guard id, tasks it still covers
  for (const Task& task : program.tasks) {
    std::vector<uint32_t> ids;
    for (const auto& [guard, left] : open) ids.push_back(guard);
    const uint32_t guards = ids.empty() ? 0 : intern_guards(std::move(ids));
    TermKey key;
    key.guards = guards;
    switch (task.op) {
      case TaskOp::Compute:
        terms[key] += work_events(task.work, task.dtype);
        if (!(task.work_per_position == Work{})) {
          TermKey per_position = key;
          per_position.per_position = true;
          per_position.stride = task.kv_stride;
          per_position.window = task.kv_window;
          per_position.offset = resolved(task.kv_offset, param);
          terms[per_position] += work_events(task.work_per_position, task.dtype);
        }
        break;
      case TaskOp::Send: {
        key.delta = task.iteration_delta;
        EventCounts sent;
        if (task.dwafer != 0)
          sent.offwafer_bytes = task.bytes;
        else
          sent.link_byte_hops = uint64_t(task.bytes) * uint64_t(std::abs(task.dx) + std::abs(task.dy));
        if (task.stream) sent += work_events(task.work, task.dtype);  // it combines on the way
        terms[key] += sent;
        break;
      }
      case TaskOp::Multicast: {
        key.delta = task.iteration_delta;
        EventCounts sent;
        sent.link_byte_hops = uint64_t(task.bytes) * task.count;
        terms[key] += sent;
        break;
      }
      default: break;
    }
    for (auto& entry : open) --entry.second;
    open.erase(std::remove_if(open.begin(), open.end(), [](const auto& entry) { return entry.second == 0; }),
               open.end());
    if ((task.op == TaskOp::SkipUnlessExpert || task.op == TaskOp::SkipIfExpert) && task.count > 0) {
      const Guard guard{task.op == TaskOp::SkipUnlessExpert, task.moe_layer,
                        resolved(task.expert, param, task.expert_offset), task.experts};
      const auto [entry, added] = guard_ids_.try_emplace(guard, uint32_t(guards_.size()));
      if (added) guards_.push_back(guard);
      open.push_back({entry->second, task.count});
    }
  }
  std::vector<Term> out;
  for (const auto& [key, events] : terms)
    if (!(events == EventCounts{})) out.push_back({key, events});
  return out;
}

ProgramEvents::ProgramEvents(const ProgramSet& set, const std::vector<uint32_t>& tile_class, uint32_t classes)
    : iterations_(set.iterations), guard_sets_{{}} {
  if (classes == 0) classes = 1;
  std::vector<bool> uses_param;
  for (const Program& program : set.programs) uses_param.push_back(reads_tile_param(program));

  // Tiles by (program, parameter, class); each distinct program and parameter reduced once.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> group_of;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Term>> terms_of;
  tile_group_.assign(set.tile_program.size(), kNoClass);
  for (uint64_t tile = 0; tile < set.tile_program.size(); ++tile) {
    const uint32_t program = set.tile_program[tile];
    if (program == ProgramSet::kIdle) continue;
    const uint32_t param = uses_param[program] && !set.tile_param.empty() ? set.tile_param[tile] : 0;
    uint32_t cls = tile < tile_class.size() ? tile_class[tile] : 0;
    if (cls >= classes) cls = classes - 1;
    const auto [entry, added] = group_of.try_emplace({program, param, cls}, uint32_t(groups_.size()));
    if (added) {
      auto terms = terms_of.find({program, param});
      if (terms == terms_of.end())
        terms = terms_of.emplace(std::make_pair(program, param), program_terms(set.programs[program], param)).first;
      groups_.push_back({cls, 0, terms->second});
    }
    ++groups_[entry->second].tiles;
    tile_group_[tile] = entry->second;
  }

  // Each class's terms over its tiles, those that differ only in offset in one bucket.
  std::vector<std::map<TermKey, std::map<uint32_t, EventCounts>>> buckets(classes);
  for (const Group& group : groups_)
    for (const Term& term : group.terms) {
      TermKey key = term.key;
      const uint32_t offset = key.offset;
      key.offset = 0;
      buckets[group.cls][key][offset] += term.events * group.tiles;
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
  for (size_t c = 0; c < class_terms_.size(); ++c)
    for (const Bucket& bucket : class_terms_[c]) out[c] += bucket_events(bucket, n, inputs, cache);
  return out;
}

EventCounts ProgramEvents::range(uint64_t first, uint64_t last, const IterationInputs& inputs) const {
  EventCounts out;
  for (uint64_t n = first; n < last; ++n)
    for (const EventCounts& events : iteration(n, inputs)) out += events;
  return out;
}

std::vector<EventCounts> ProgramEvents::per_tile(uint64_t first, uint64_t last, const IterationInputs& inputs) const {
  std::vector<EventCounts> per_group(groups_.size());
  for (uint64_t n = first; n < last; ++n) {
    std::vector<int8_t> cache(guards_.size(), -1);
    for (size_t g = 0; g < groups_.size(); ++g)
      for (const Term& term : groups_[g].terms) per_group[g] += term_events(term.key, term.events, n, inputs, cache);
  }
  std::vector<EventCounts> out(tile_group_.size());
  for (size_t tile = 0; tile < tile_group_.size(); ++tile)
    if (tile_group_[tile] != kNoClass) out[tile] = per_group[tile_group_[tile]];
  return out;
}

}  // namespace wafersim
