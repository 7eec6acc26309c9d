#include "mapping/routed_passes.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "mapping/context_steps.h"

namespace wafersim::mapping {

namespace {

// Parts are timed from kFarCycle: far above every time a part gives where it
// does not reach, which stays at or near cycle 0.
constexpr uint64_t kFar = kFarCycle;
const Timed kFarTime{kFar, {}};

// Passes checked against run_pass before the parts are trusted alone.
constexpr uint64_t kPassesChecked = 2;

// Iterations whose MoE layers are taken together, layer by layer. On the
// 2-core machine deepseek-v3 over 10,000 tokens took 13.2-14.3 s a token at a
// time, 10.8-11.3 s in blocks of 16, 9.6-9.9 s of 64, 8.6-8.7 s of 256 and
// 8.2-8.7 s of 1,024 (a block holds a figure set per MoE layer and iteration:
// 5 MiB for deepseek-v3 at 256); gpt-oss-120b, whose chains are small, is
// the same at every size.
constexpr uint64_t kBlockIterations = 256;

// Keys of two or more routed blocks kept per chain: a model with many
// experts meets new ones almost every token, so what is kept is bounded
// whatever the length (a key dropped is timed again if it comes back).
constexpr size_t kKeysKept = 1024;

// Marks on the critical path of the two parts of a tie, timed together:
// the figure's path shows which of them it came from. They go where the
// closed form charges nothing (it has no contention), far above any cycles.
constexpr uint64_t kMarkA = uint64_t(1) << 50, kMarkB = uint64_t(2) << 50;
constexpr size_t kMarkCategory = size_t(Category::Contention);

bool same_pass(const Pass& a, const Pass& b) {
  return a.start == b.start && a.finish == b.finish && a.exit == b.exit && a.after_latest_cycle == b.after_latest_cycle;
}

// A routed key packed into 64 bits (16 bits a block, 0 for none), when it fits.
std::optional<uint64_t> packed(const std::vector<uint32_t>& key) {
  if (key.size() > 4) return std::nullopt;
  uint64_t out = 0;
  for (uint32_t block : key) {
    if (block >= 0xffff) return std::nullopt;
    out = out << 16 | (block + 1);
  }
  return out;
}

const Timed& latest_of(const std::vector<Timed>& times) {
  return *std::max_element(times.begin(), times.end(),
                           [](const Timed& a, const Timed& b) { return a.cycle < b.cycle; });
}

}  // namespace

std::unique_ptr<RoutedPasses> RoutedPasses::of(const Plan& plan, const PlanSpans& spans, const SendCycles& sends) {
  const size_t regions = plan.regions.size();
  if (plan.phase != Phase::Decode || regions == 0 || plan.regions[0].slices_in) return nullptr;
  std::unique_ptr<RoutedPasses> passes(new RoutedPasses(plan, spans, sends));
  for (size_t r = 0; r < regions; ++r) {
    const Region& region = plan.regions[r];
    const auto& steps = region.blocks[0].steps;
    const RegionSpans* table = spans.of(r);
    Parts& parts = passes->parts_[r];
    if (region.kind == RegionKind::Moe) {
      if (!table || table->end() >= steps.size()) return nullptr;
      parts.combine_step = table->end();
      parts.combine = dynamic_cast<const CombineParts*>(steps[parts.combine_step].get());
      if (!parts.combine) return nullptr;  // mapping.moe_combine: root or tree
      for (size_t s = parts.combine_step + 1; s < steps.size(); ++s)
        if (steps[s]->input() != FrontKind::Column || steps[s]->output() != FrontKind::Column) return nullptr;
    } else if (table ? table->end() != steps.size() : region.reads_context(region.head_steps(), steps.size())) {
      return nullptr;
    }
    if (r > 0 && region.slices_in != plan.regions[r - 1].slices_out) return nullptr;
    if (region.slices_in) {
      const size_t head = region.head_steps();
      if (!dynamic_cast<const GatherStep*>(steps[head - 1].get()) || region.reads_context(0, head)) return nullptr;
      // Every root-column tile takes a slice, so none waits for its server alone.
      std::vector<char> reached(region.line_tiles(), 0);
      for (const Plan::HandoffPiece& piece : plan.handoffs[r - 1]) reached[piece.to] = 1;
      if (std::count(reached.begin(), reached.end(), 0) != 0) return nullptr;
    }
  }
  return passes;
}

RoutedPasses::RoutedPasses(const Plan& plan, const PlanSpans& spans, const SendCycles& sends)
    : plan_(plan), spans_(spans), sends_(sends), parts_(plan.regions.size()) {}

RoutedPasses::Reach RoutedPasses::layer_reach(size_t r) {
  Parts& parts = parts_[r];
  if (!parts.prepared) prepare_combine(r);
  Reach reach;
  // Every part starts at the dispatch: the latest is taken among their spans.
  take(r, reach, parts.base);
  parts.combine->chain_keys(*inputs_, iteration_, keys_);
  for (size_t c = 0; c < keys_.size(); ++c) take(r, reach, chain_reach(r, c, keys_[c]));
  if (reach[kFinish].unbroken || reach[kRoot].unbroken || reach[kNextHeads].unbroken) reach = exact_reach(r);
  return reach;
}

const RoutedPasses::Reach& RoutedPasses::blocked_layer_reach(size_t r, uint64_t n) {
  if (layer_slot_.empty()) {
    size_t slots = 0;
    for (const Parts& parts : parts_) layer_slot_.push_back(parts.combine ? slots++ : SIZE_MAX);
  }
  if (n < block_first_ || n - block_first_ >= kBlockIterations) {
    const uint64_t end = std::min(n + kBlockIterations, plan_.programs.iterations);
    const size_t layers = layer_slot_.size() - size_t(std::count(layer_slot_.begin(), layer_slot_.end(), SIZE_MAX));
    block_.assign(layers * kBlockIterations, Reach{});
    for (size_t layer = 0; layer < parts_.size(); ++layer) {
      if (layer_slot_[layer] == SIZE_MAX) continue;
      for (iteration_ = n; iteration_ < end; ++iteration_)
        block_[layer_slot_[layer] * kBlockIterations + (iteration_ - n)] = layer_reach(layer);
    }
    block_first_ = n;
    iteration_ = n;
  }
  return block_[layer_slot_[r] * kBlockIterations + (n - block_first_)];
}

RoutedPasses::Reach RoutedPasses::reach_of(size_t r, const Front& out, const std::vector<Timed>& line_done) {
  const Region& region = plan_.regions[r];
  const uint32_t root_tile = region.blocks[0].geo.root_i();
  auto figure = [](const Timed& t) {
    Figure f;
    if (t.cycle < kFar) return f;  // no part of it reached there
    f.present = true;
    f.at = t;
    f.at.cycle -= kFar;  // kFarTime has no path
    return f;
  };
  Reach reach;
  // As run_pass reads them.
  reach[kFinish] = figure(out.kind == FrontKind::Column && !region.slices_in ? out.at[root_tile] : out.latest());
  reach[kRoot] = figure(out.kind == FrontKind::Root ? out.root : out.at[root_tile]);
  if (!line_done.empty()) reach[kLines] = figure(latest_of(line_done));
  if (r + 1 >= plan_.regions.size() || r >= plan_.region_sends.size() || !region.slices_out) return reach;
  Front in;
  in.kind = FrontKind::Column;
  handoff_slices(plan_, sends_, r, Timed{}, out, in.at);
  reach[kNextStart] = figure(latest_of(in.at));
  const Region& next = plan_.regions[r + 1];
  const size_t head = next.head_steps();
  const ContextWatch watched(*inputs_);
  in = next.run(std::move(in), 0, head - 1, watched, iteration_);
  const auto& reduce = static_cast<const GatherStep&>(*next.blocks[0].steps[head - 1]);
  reach[kNextHeads] = figure(reduce.heads_at_root(in));
  reach[kNextEnd] = figure(reduce.latency(in, watched, iteration_).root);
  if (watched.read() || watched.routing_read()) disabled_ = true;
  return reach;
}

RoutedPasses::Reach RoutedPasses::combine_part(size_t r, const Timed& dispatch, bool base,
                                               const std::vector<std::vector<Timed>>& tops) {
  const Region& region = plan_.regions[r];
  const Parts& parts = parts_[r];
  Front out = parts.combine->assemble(dispatch, base, tops);
  std::vector<Timed> line_done = out.at;
  const ContextWatch watched(*inputs_);
  out = region.run(std::move(out), parts.combine_step + 1, region.blocks[0].steps.size(), watched, iteration_,
                   &line_done);
  if (watched.read() || watched.routing_read()) disabled_ = true;
  return reach_of(r, out, line_done);
}

void RoutedPasses::prepare_combine(size_t r) {
  Parts& parts = parts_[r];
  const size_t chains = parts.combine->chains();
  parts.base = combine_part(r, kFarTime, true, std::vector<std::vector<Timed>>(chains));
  parts.columns.resize(chains);
  parts.routed.assign(chains, KeptByKey<Reach>(kKeysKept));
  parts.routed_long.resize(chains);
  uint32_t unit = 1;
  for (size_t c = 0; c < chains; ++c) {
    parts.first_unit.push_back(unit);
    std::vector<std::vector<Timed>> tops(chains);
    tops[c].assign(parts.combine->chain_tops(c, {}).size(), Timed{});  // a column at cycle 0 reaches nowhere
    for (size_t j = 0; j < tops[c].size(); ++j, ++unit) {
      tops[c][j] = kFarTime;
      parts.columns[c].push_back(combine_part(r, kFarTime, false, tops));
      for (Figure& f : parts.columns[c].back()) f.unit = unit;
      tops[c][j] = Timed{};
    }
  }
  if (unit >= uint32_t(1) << 30) throw std::logic_error("an MoE layer with more parts than tie_winner's keys hold");
  parts.prepared = true;
  for (size_t c = 0; c < chains; ++c) chain_reach(r, c, {});  // kept in parts.unrouted
}

const RoutedPasses::Reach& RoutedPasses::chain_reach(size_t r, size_t chain, const std::vector<uint32_t>& key) {
  Parts& parts = parts_[r];
  Reach* kept = nullptr;
  const std::optional<uint64_t> packed_key = packed(key);  // nonzero unless the key is empty
  if (key.empty()) {
    if (parts.unrouted.size() > chain) return parts.unrouted[chain];
    kept = &parts.unrouted.emplace_back();  // prepare_combine asks chain by chain
  } else if (key.size() == 1) {             // the common case, kept without hashing
    if (parts.one_block.size() <= key[0]) parts.one_block.resize(key[0] + 1);
    std::optional<Reach>& one = parts.one_block[key[0]];
    if (one) return *one;
    kept = &one.emplace();
  } else if (packed_key) {
    if (Reach* found = parts.routed[chain].find(*packed_key)) return *found;
    kept = &parts.routed[chain].insert(*packed_key);
  } else {
    auto it = parts.routed_long[chain].find(key);
    if (it != parts.routed_long[chain].end()) return it->second;
    if (parts.routed_long[chain].size() >= kKeysKept) parts.routed_long[chain].clear();
    kept = &parts.routed_long[chain][key];
  }
  const std::vector<Timed> tops = parts.combine->chain_tops(chain, key);
  for (size_t j = 0; j < tops.size(); ++j) take(r, *kept, parts.columns[chain][j], &tops[j]);
  return *kept;
}

const RoutedPasses::Reach& RoutedPasses::region_reach(size_t r, const RegionSpan* span) {
  Parts& parts = parts_[r];
  const Region& region = plan_.regions[r];
  if (span) {
    auto it = parts.by_span.find(span);
    if (it == parts.by_span.end()) {
      const RegionSpan far = span->shifted(kFarTime);
      it = parts.by_span.emplace(span, reach_of(r, far.out, far.line_done)).first;
    }
    return it->second;
  }
  if (!parts.fixed) {
    // As run_pass times a region without a table, from idle servers.
    const size_t steps = region.blocks[0].steps.size();
    std::vector<Timed> line_done(region.line_tiles(), kFarTime);
    const std::vector<Timed> idle(region.line_tiles());
    const ContextWatch watched(*inputs_);
    const Front out = region.run(Front::at_root(kFarTime), region.head_steps(), steps, watched, iteration_, &line_done,
                                 region.waits_for_line() ? &idle : nullptr);
    if (watched.read() || watched.routing_read()) disabled_ = true;
    parts.fixed = reach_of(r, out, line_done);
  }
  return *parts.fixed;
}

RoutedPasses::Reach RoutedPasses::exact_reach(size_t r) {
  const Region& region = plan_.regions[r];
  std::vector<Timed> line_done(region.line_tiles());
  const Front out = region.run(Front::at_root(kFarTime), parts_[r].combine_step, region.blocks[0].steps.size(),
                               *inputs_, iteration_, &line_done);
  return reach_of(r, out, line_done);
}

void RoutedPasses::take(size_t r, Reach& into, const Reach& part, const Timed* by) {
  for (size_t f = 0; f < kFigures; ++f) {
    const Figure& p = part[f];
    Figure& held = into[f];
    if (!p.present) continue;
    // Most parts are not the latest: their cycle alone says so.
    const uint64_t cycle = by ? add_cycles(by->cycle, p.at.cycle) : p.at.cycle;
    if (held.present && cycle < held.at.cycle) continue;
    const Timed t = by ? by->then(p.at) : p.at;
    if (!held.present || t.cycle > held.at.cycle) {
      held = Figure{true, p.unbroken, p.unit, t};
      continue;
    }
    // Only the finish, the root and the next region's heads pass a critical path on.
    const bool path_passed_on = f == kFinish || f == kRoot || f == kNextHeads;
    if (t.cycle != held.at.cycle || !path_passed_on || t.path == held.at.path) continue;
    const uint32_t winner = tie_winner(r, f, held.unit, p.unit);
    if (winner == UINT32_MAX) held.unbroken = true;
    if (winner == p.unit) held = Figure{true, p.unbroken, p.unit, t};
  }
}

uint32_t RoutedPasses::tie_winner(size_t r, size_t f, uint32_t a, uint32_t b) {
  Parts& parts = parts_[r];
  if (a == b || !parts.combine) return UINT32_MAX;
  // A layer has far fewer than 2^30 units.
  const uint64_t key = uint64_t(f) << 60 | uint64_t(std::min(a, b)) << 30 | std::max(a, b);
  if (auto it = parts.tie_winners.find(key); it != parts.tie_winners.end()) return it->second;
  // Each unit's place, marked, so that the figure ties: their order decides.
  auto chain_of = [&](uint32_t unit) {  // a unit other than the base
    return size_t(std::upper_bound(parts.first_unit.begin(), parts.first_unit.end(), unit) - parts.first_unit.begin() -
                  1);
  };
  auto unit_reach = [&](uint32_t unit) -> const Reach& {
    if (unit == 0) return parts.base;
    const size_t c = chain_of(unit);
    return parts.columns[c][unit - parts.first_unit[c]];
  };
  const uint64_t wa = unit_reach(a)[f].at.cycle, wb = unit_reach(b)[f].at.cycle, high = std::max(wa, wb);
  Timed dispatch = kFarTime;
  std::vector<std::vector<Timed>> tops(parts.combine->chains());
  auto place = [&](uint32_t unit, uint64_t shift, uint64_t mark) {
    Timed at{kFar + shift, {}};
    at.path[kMarkCategory] = mark;
    if (unit == 0) {
      dispatch = at;
      return;
    }
    const size_t c = chain_of(unit);
    if (tops[c].empty()) tops[c].assign(parts.columns[c].size(), Timed{});
    tops[c][unit - parts.first_unit[c]] = at;
  };
  place(a, high - wa, kMarkA);
  place(b, high - wb, kMarkB);
  const Reach both = combine_part(r, dispatch, a == 0 || b == 0, tops);
  const uint64_t mark = both[f].at.path[kMarkCategory];
  const uint32_t winner = mark == kMarkA ? a : mark == kMarkB ? b : UINT32_MAX;
  parts.tie_winners.emplace(key, winner);
  return winner;
}

std::optional<Pass> RoutedPasses::pass(const IterationInputs& inputs, uint64_t n, const Timed& arrival) {
  if (disabled_) return std::nullopt;
  inputs_ = &inputs;
  iteration_ = n;
  const size_t regions = plan_.regions.size();
  Pass pass;
  pass.start.assign(regions, 0);
  pass.finish.assign(regions, 0);
  Timed root_in = arrival;  // for a region that takes its input at the root
  Reach before;             // the region before, for one that takes slices
  Timed root_free;
  for (size_t r = 0; r < regions; ++r) {
    const Region& region = plan_.regions[r];
    Timed from;
    uint64_t start = 0;
    if (region.slices_in) {
      const Timed& heads = before[kNextHeads].at;
      from = heads.after(before[kNextEnd].at.cycle - heads.cycle, Category::Reduce);
      start = before[kNextStart].at.cycle;
    } else {
      from = root_in;
      start = from.cycle;
    }
    Parts& parts = parts_[r];
    const RegionSpans* table = spans_.of(r);
    const RegionSpan* span = table ? &table->at(inputs.context(n)) : nullptr;
    Reach reach;
    if (parts.combine) {
      const Timed dispatch = from.then(span->out.root);
      reach = blocked_layer_reach(r, n);
      for (Figure& f : reach)
        if (f.present) f.at = dispatch.then(f.at);
    } else {
      take(r, reach, region_reach(r, span), &from);
    }
    if (disabled_ || !reach[kFinish].present || !reach[kRoot].present) return std::nullopt;
    pass.start[r] = start;
    pass.finish[r] = reach[kFinish].at.cycle;
    root_free = reach[kRoot].at;
    pass.after_latest_cycle = std::max({pass.after_latest_cycle, root_free.cycle, reach[kLines].at.cycle});
    if (r >= plan_.region_sends.size()) break;  // a prefill's last layer sends nothing
    if (region.slices_out) {
      if (!reach[kNextStart].present || !reach[kNextHeads].present || !reach[kNextEnd].present) return std::nullopt;
      before = reach;
    } else {
      const Task& send = plan_.region_sends[r];
      root_in = root_free.after(sends_.to_next[r], send.dwafer != 0 ? Category::OffWafer : Category::Fabric);
    }
  }
  pass.exit = root_free;
  if (checked_ < kPassesChecked) {
    ++checked_;
    const Pass full = run_pass(plan_, spans_, sends_, inputs, n, arrival, Servers::idle(plan_), nullptr, false);
    if (!same_pass(pass, full)) {
      disabled_ = true;
      return std::nullopt;
    }
  }
  return pass;
}

}  // namespace wafersim::mapping
