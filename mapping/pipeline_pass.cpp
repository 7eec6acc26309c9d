#include "mapping/pipeline_pass.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace wafersim::mapping {

Servers Servers::idle(const Plan& plan) {
  Servers servers;
  servers.root_free.resize(plan.regions.size());
  for (const Region& region : plan.regions) servers.line_free.emplace_back(region.line_tiles());
  return servers;
}

Servers Servers::shifted(const Timed& by) const {
  Servers servers = *this;
  for (Timed& t : servers.root_free) t = by.then(t);
  for (std::vector<Timed>& line : servers.line_free)
    for (Timed& t : line) t = by.then(t);
  return servers;
}

uint64_t Servers::latest_cycle() const {
  uint64_t latest = 0;
  for (const Timed& t : root_free) latest = std::max(latest, t.cycle);
  for (const std::vector<Timed>& line : line_free)
    for (const Timed& t : line) latest = std::max(latest, t.cycle);
  return latest;
}

Timed time_between(const Timed& earlier, const Timed& later) {
  if (later.cycle < earlier.cycle) throw std::logic_error("time_between: the later time is earlier");
  Timed between;
  between.cycle = later.cycle - earlier.cycle;
  // Per category the difference can be negative (the critical path changed
  // course); unsigned arithmetic wraps, and adding it back unwraps it exactly.
  for (size_t c = 0; c < between.path.size(); ++c) between.path[c] = later.path[c] - earlier.path[c];
  return between;
}

Timed repeated(const Timed& step, uint64_t times) {
  Timed total;
  total.cycle = step.cycle * times;
  for (size_t c = 0; c < total.path.size(); ++c) total.path[c] = step.path[c] * times;
  return total;
}

namespace {

// The front with every time `by` earlier (false if some part is earlier than `by`), or later.
bool shift_back(Front& front, const Timed& by) {
  auto back = [&](Timed& t) {
    if (t.cycle < by.cycle) return false;
    t = time_between(by, t);
    return true;
  };
  if (!back(front.root)) return false;
  for (Timed& t : front.at)
    if (!back(t)) return false;
  for (Timed& t : front.line_done)
    if (!back(t)) return false;
  return true;
}
Front shifted(Front front, const Timed& by) {
  front.root = by.then(front.root);
  for (Timed& t : front.at) t = by.then(t);
  for (Timed& t : front.line_done) t = by.then(t);
  return front;
}

// How the input met its server in region r of `pass`.
void note_input(Pass& pass, size_t r, const Timed& server_free, const Timed& input) {
  if (input.cycle > server_free.cycle) {
    pass.came_after_server[r] = true;
    return;
  }
  // A tie waits too, as later() breaks it.
  pass.least_wait_cycles[r] = std::min(pass.least_wait_cycles[r], server_free.cycle - input.cycle);
}

}  // namespace

Front HeadMemo::run(const Region& region, size_t r, Front in, const IterationInputs& inputs, uint64_t iteration) {
  const Timed base =
      *std::min_element(in.at.begin(), in.at.end(), [](const Timed& a, const Timed& b) { return a.cycle < b.cycle; });
  const uint64_t context = inputs.context(iteration);
  Entry& entry = last_[r];
  auto same_pattern = [&] {
    if (entry.in.size() != in.at.size()) return false;
    for (size_t i = 0; i < in.at.size(); ++i)
      if (time_between(base, in.at[i]) != entry.in[i]) return false;
    return true;
  };
  if (entry.valid && (!entry.read_context || entry.context == context) && same_pattern())
    return shifted(entry.out, base);
  std::vector<Timed> relative(in.at.size());
  for (size_t i = 0; i < in.at.size(); ++i) relative[i] = time_between(base, in.at[i]);
  const ContextWatch watched(inputs);
  Front out = region.run(std::move(in), 0, region.head_steps(), watched, iteration);
  Front out_relative = out;
  // Head steps end at the first reduce to the root, before any MoE dispatch:
  // should one ever read the routing, its front is not kept.
  entry.valid = !watched.routing_read() && shift_back(out_relative, base);
  entry.read_context = watched.read();
  entry.context = context;
  entry.in = std::move(relative);
  entry.out = std::move(out_relative);
  return out;
}

SendCycles::SendCycles(const Plan& plan) {
  for (const Task& send : plan.region_sends) to_next.push_back(send_cycles(plan.hw, send));
  for (const std::vector<Plan::HandoffPiece>& pieces : plan.handoffs) {
    handoff.emplace_back();
    for (const Plan::HandoffPiece& piece : pieces)
      handoff.back().push_back({piece.from, piece.to, send_cycles(plan.hw, piece.send),
                                piece.send.dwafer != 0 ? Category::OffWafer : Category::Fabric});
  }
}

void handoff_slices(const Plan& plan, const SendCycles& sends, size_t r, const Timed& from, const Front& out,
                    std::vector<Timed>& slices) {
  // Each tile's latest piece is found by its cycle, and only its critical path copied.
  const uint32_t tiles = plan.regions[r + 1].line_tiles();
  thread_local std::vector<uint64_t> latest;
  thread_local std::vector<size_t> piece_of;  // SIZE_MAX: no piece yet
  latest.assign(tiles, 0);
  piece_of.assign(tiles, SIZE_MAX);
  const std::vector<SendCycles::Piece>& pieces = sends.handoff[r];
  for (size_t k = 0; k < pieces.size(); ++k) {
    const SendCycles::Piece& piece = pieces[k];
    const uint64_t arrival = add_cycles(add_cycles(from.cycle, out.at[piece.from].cycle), piece.cycles);
    if (arrival > latest[piece.to]) latest[piece.to] = arrival, piece_of[piece.to] = k;  // a tie keeps the first
  }
  slices.assign(tiles, Timed{});
  for (uint32_t to = 0; to < tiles; ++to) {
    if (piece_of[to] == SIZE_MAX) continue;
    const SendCycles::Piece& piece = pieces[piece_of[to]];
    slices[to] = from.then(out.at[piece.from]).after(piece.cycles, piece.category);
  }
}

Pass run_pass(const Plan& plan, const PlanSpans& spans, const SendCycles& sends, const IterationInputs& inputs,
              uint64_t n, const Timed& arrival_at_first, Servers servers, HeadMemo* heads, bool keep_servers) {
  uint64_t latest_line_cycle = 0;  // without keep_servers: the latest of the root-column tiles' servers
  const size_t regions = plan.regions.size();
  Pass pass;
  pass.start.assign(regions, 0);
  pass.finish.assign(regions, 0);
  pass.came_after_server.assign(regions, false);
  pass.least_wait_cycles.assign(regions, UINT64_MAX);
  Timed arrival = arrival_at_first;
  std::vector<Timed> slices;  // slices in: when the last piece of each root-column tile's slice arrived
  for (size_t r = 0; r < regions; ++r) {
    const Region& region = plan.regions[r];
    std::vector<Timed>& line_free = servers.line_free[r];
    // The root (or each root-column tile) takes the input when it arrives, or
    // when it is done with the previous iteration.
    Front front;
    uint64_t start = 0;
    if (region.slices_in) {
      front.kind = FrontKind::Column;
      front.at.resize(region.line_tiles());
      for (uint32_t i = 0; i < region.line_tiles(); ++i) {
        note_input(pass, r, line_free[i], slices[i]);
        front.at[i] = later(line_free[i], slices[i]);
        start = std::max(start, front.at[i].cycle);
      }
      front = heads ? heads->run(region, r, std::move(front), inputs, n)
                    : region.run(std::move(front), 0, region.head_steps(), inputs, n);
    } else {
      note_input(pass, r, servers.root_free[r], arrival);
      front = Front::at_root(later(servers.root_free[r], arrival));
      start = front.root.cycle;
    }
    // The region's span: a table's, measured from cycle 0 and read `from` its
    // start (not copied: a pass over a full wafer's regions would copy every
    // root-column tile's figures of each), or one evaluated from the start.
    const RegionSpans* table = spans.of(r);
    RegionSpan evaluated;
    const RegionSpan* span = &evaluated;
    Timed from;
    const size_t steps = region.blocks[0].steps.size();
    if (table) {
      span = &table->at(inputs.context(n));
      from = front.root;
      if (table->end() < steps) {
        // An MoE layer's routed steps, run for this iteration from where the table leaves the front (the root).
        evaluated.line_done.resize(span->line_done.size());
        for (size_t i = 0; i < span->line_done.size(); ++i) evaluated.line_done[i] = from.then(span->line_done[i]);
        evaluated.out =
            region.run(Front::at_root(from.then(span->out.root)), table->end(), steps, inputs, n, &evaluated.line_done);
        span = &evaluated;
        from = Timed{};
      }
    } else {
      evaluated.line_done.assign(region.line_tiles(), front.root);
      evaluated.out = region.run(front, region.head_steps(), steps, inputs, n, &evaluated.line_done,
                                 region.waits_for_line() ? &line_free : nullptr);
    }
    const Front& out = span->out;
    // Slices out: the last root-column tile's send, or the root's when the input came to the root (programs.cpp).
    const uint32_t root_tile = region.blocks[0].geo.root_i();  // the root's place on the root column
    const Timed finish =
        from.then(out.kind == FrontKind::Column && !region.slices_in ? out.at[root_tile] : out.latest());
    pass.start[r] = start;
    pass.finish[r] = finish.cycle;
    servers.root_free[r] = from.then(out.kind == FrontKind::Root ? out.root : out.at[root_tile]);
    if (keep_servers) {
      line_free.resize(span->line_done.size());
      for (size_t i = 0; i < line_free.size(); ++i) line_free[i] = from.then(span->line_done[i]);
    } else if (!span->line_done.empty()) {
      uint64_t latest = 0;
      for (const Timed& done : span->line_done) latest = std::max(latest, done.cycle);
      latest_line_cycle = std::max(latest_line_cycle, add_cycles(from.cycle, latest));
    }
    if (r >= plan.region_sends.size()) break;  // a prefill's last layer sends nothing
    if (region.slices_out) {
      handoff_slices(plan, sends, r, from, out, slices);
    } else {
      const Task& send = plan.region_sends[r];
      arrival = servers.root_free[r].after(sends.to_next[r], send.dwafer != 0 ? Category::OffWafer : Category::Fabric);
    }
  }
  pass.exit = servers.root_free[regions - 1];
  if (keep_servers) {
    pass.after = std::move(servers);
    pass.after_latest_cycle = pass.after.latest_cycle();
  } else {
    pass.after_latest_cycle = latest_line_cycle;
    for (const Timed& t : servers.root_free) pass.after_latest_cycle = std::max(pass.after_latest_cycle, t.cycle);
  }
  return pass;
}

}  // namespace wafersim::mapping
