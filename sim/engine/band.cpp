#include "sim/engine/band.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <new>
#include <stdexcept>
#include <utility>

#include "models/cost.h"
#include "models/fabric.h"

namespace wafersim::sim {

namespace {
constexpr uint64_t kDynamicCycles = UINT64_MAX;
constexpr uint64_t kProgressCheckEvents = uint64_t(1) << 20;

// Out of line, so that Band::schedule, run for almost every event, stays small.
[[noreturn, gnu::cold, gnu::noinline]] void scheduled_in_the_past() {
  throw std::logic_error("engine: an event was scheduled before the current cycle");
}
}  // namespace

template <bool kProfiled>
Band<kProfiled>::Band(const sc_core::sc_module_name& name, World& world, uint32_t index, uint32_t first_tile,
                      uint32_t end_tile)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      world_(world),
      index_(index),
      ticks_per_cycle_(sc_core::sc_time(1, sc_core::SC_NS).value()) {
  in.bind(*this);
  SC_HAS_PROCESS(Band);
  SC_METHOD(wake);
  sensitive << wake_event_;

  // One allocation for all of the band's tile objects; they are never
  // destroyed one by one (SystemC unlinks each from its parent in linear time).
  const uint32_t count = end_tile - first_tile;
  tile_objects_ = static_cast<TileObject*>(::operator new(sizeof(TileObject) * std::max<uint32_t>(count, 1)));
  char tile_name[48];
  for (uint32_t tile = first_tile; tile < end_tile; ++tile) {
    const uint32_t row = world.place.row(tile);
    // "w<wafer>x<x>y<y>", written by hand: snprintf took 4 % of a 4-token run's instructions.
    char* end = tile_name;
    for (auto [letter, value] :
         {std::pair{'w', row / world.height}, {'x', world.place.x(tile)}, {'y', row % world.height}}) {
      *end++ = letter;
      end = std::to_chars(end, tile_name + sizeof tile_name - 1, value).ptr;
    }
    *end = '\0';
    new (&tile_objects_[tile - first_tile]) TileObject(tile_name, tile);
  }
}

template <bool kProfiled>
void Band<kProfiled>::end_of_elaboration() {
  sinks_.resize(size_t(out.size()));
  for (int i = 0; i < out.size(); ++i) sinks_[size_t(i)] = out[i];
}

template <bool kProfiled>
void Band<kProfiled>::inject(const Message& message) {
  wheel_.push(0, allocate(message) | kDeliveryBit);
}

template <bool kProfiled>
void Band<kProfiled>::deliver(uint64_t cycle, const Message& message) {
  schedule(cycle, allocate(message) | kDeliveryBit);
}

template <bool kProfiled>
void Band<kProfiled>::continue_multicast(uint64_t cycle, uint32_t multicast) {
  schedule(cycle, multicast | kMulticastBit);
}

template <bool kProfiled>
uint32_t Band<kProfiled>::allocate(const Message& message) {
  const uint32_t slot = free_;
  if (slot == kNoMessage) return grow_pool(message);
  free_ = pool_[slot].next;
  pool_[slot] = message;
  pool_[slot].next = kNoMessage;
  return slot;
}

template <bool kProfiled>
uint32_t Band<kProfiled>::grow_pool(const Message& message) {
  pool_.push_back(message);
  pool_.back().next = kNoMessage;
  return uint32_t(pool_.size() - 1);
}

template <bool kProfiled>
void Band<kProfiled>::release(uint32_t message_index) {
  pool_[message_index].next = free_;
  free_ = message_index;
}

template <bool kProfiled>
void Band<kProfiled>::schedule(uint64_t cycle, uint32_t event) {
  if (cycle < cycle_) scheduled_in_the_past();
  wheel_.push(cycle, event);
  if (!running_ && cycle < scheduled_) {
    const uint64_t now = sc_core::sc_time_stamp().value() / ticks_per_cycle_;
    scheduled_ = cycle;
    wake_at(cycle, now);
  }
}

// SystemC counts time in 64-bit ticks: a wake-up past that horizon would wrap
// around, so the band stays asleep and the run reports where it stopped.
template <bool kProfiled>
void Band<kProfiled>::wake_at(uint64_t cycle, uint64_t now) {
  if (cycle > max_simulated_cycles()) {
    world_.past_time_limit = true;
    return;
  }
  wake_event_.notify(sc_core::sc_time::from_value((cycle - now) * ticks_per_cycle_));
}

template <bool kProfiled>
void Band<kProfiled>::wake() {
  const uint64_t cycle = sc_core::sc_time_stamp().value() / ticks_per_cycle_;
  cycle_ = cycle;
  running_ = true;
  scheduled_ = UINT64_MAX;
  wheel_.advance_to(cycle);
  if constexpr (kProfiled) {
    const auto start = std::chrono::steady_clock::now();
    drain(cycle);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    world_.parallelism->wake(index_, cycle, seconds);
  } else {
    drain(cycle);
  }
  running_ = false;
  uint64_t next = 0;
  if (wheel_.next_time(&next)) {
    scheduled_ = next;
    wake_at(next, cycle);
  }
  if (world_.options.progress && world_.events >= world_.next_progress_check) report_progress(cycle);
}

template <bool kProfiled>
void Band<kProfiled>::drain(uint64_t cycle) {
  // Events of this cycle may schedule more events at this cycle: take until none is left.
  for (uint32_t node = wheel_.take(cycle); node != TimingWheel::kEnd; node = wheel_.take(cycle)) {
    while (node != TimingWheel::kEnd) {
      const uint32_t event = wheel_.pop_node(node, &node);
      if constexpr (kProfiled)
        profile_event(event, cycle);
      else
        dispatch(event, cycle);
    }
  }
}

template <bool kProfiled>
void Band<kProfiled>::dispatch(uint32_t event, uint64_t cycle) {
  if (event & kDeliveryBit)
    receive(event & kIndexMask, cycle);
  else if (event & kMulticastBit)
    step_multicast(event & kIndexMask, cycle);
  else
    run_tile(event, cycle);
}

// Whatever an event does happens at its tile: the tile it runs, or the one its
// message or multicast step reaches.
template <bool kProfiled>
void Band<kProfiled>::profile_event(uint32_t event, uint64_t cycle) {
  World& w = world_;
  uint32_t tile = event;
  if (event & kDeliveryBit) {
    tile = pool_[event & kIndexMask].tile;
  } else if (event & kMulticastBit) {
    const MulticastState& m = w.multicasts[event & kIndexMask];
    tile = uint32_t(int64_t(m.source) + int64_t(m.tile_step) * m.next_k);
  }
  const uint64_t before = w.events;
  dispatch(event, cycle);
  w.parallelism->events(index_, w.place.row(tile), w.place.x(tile), cycle, w.events - before);
}

template <bool kProfiled>
void Band<kProfiled>::report_progress(uint64_t cycle) {
  world_.next_progress_check = world_.events + kProgressCheckEvents;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - world_.last_progress).count() < world_.options.progress_seconds) return;
  world_.last_progress = now;
  EngineProgress progress;
  progress.cycle = cycle;
  progress.events = world_.events;
  progress.tiles_finished = world_.tiles_finished;
  progress.final_marks = world_.final_marks;
  progress.tiles_active = world_.tiles_active;
  progress.seconds = std::chrono::duration<double>(now - world_.run_start).count();
  world_.options.progress(progress);
}

template <bool kProfiled>
void Band<kProfiled>::run_tile(uint32_t tile, uint64_t cycle) {
  World& w = world_;
  const uint32_t program_index = w.set.tile_program[tile];
  const std::vector<Task>& tasks = w.set.programs[program_index].tasks;
  const std::vector<CompiledTask>& compiled = w.compiled[program_index];
  const uint32_t task_count = uint32_t(tasks.size());
  TileState& s = w.state[tile];
  uint32_t pc = s.pc;
  uint32_t iteration = s.iteration;
  for (;;) {
    if (pc >= task_count) {
      pc = 0;
      if (++iteration == w.iterations) {
        ++w.tiles_finished;
        w.end_cycle = std::max(w.end_cycle, s.now);
        break;
      }
      continue;
    }
    const Task& task = tasks[pc];
    switch (task.op) {
      case TaskOp::Compute: {
        uint64_t cycles = compiled[pc].cycles;
        if (cycles == kDynamicCycles) {
          const uint64_t positions = task_positions(task, w.set, tile, w.contexts[iteration]);
          cycles = compute_cycles(w.hw.tile, task.dtype, task.work + task.work_per_position * positions);
        }
        ++w.events;
        ++pc;
        uint64_t end = s.now + cycles;
        if (task.stream) {
          StreamInputs& in = w.stream_inputs[tile];
          end = stream_tail_departure(s.now, std::max(cycles, in.ingest_cycles), in.tail);
          in = StreamInputs{};
        }
        if (end == s.now) continue;
        s.path[size_t(task.category)] += end - s.now;
        w.compute_busy[tile] += cycles;
        s.now = end;
        s.pc = pc;
        s.iteration = iteration;
        schedule(s.now, tile);
        return;
      }
      case TaskOp::Send: {
        const uint64_t free = send(tile, task, compiled[pc], iteration, cycle);
        ++w.events;
        ++pc;
        if (free == s.now) continue;
        // A stream keeps the core combining and sending until its tail has left.
        s.path[size_t(Category::Reduce)] += free - s.now;
        s.now = free;
        s.pc = pc;
        s.iteration = iteration;
        schedule(s.now, tile);
        return;
      }
      case TaskOp::Multicast:
        multicast(tile, task, compiled[pc], iteration, cycle);
        ++w.events;
        ++pc;
        continue;
      case TaskOp::Wait:
        // Most Waits come before their messages: nothing is parked to look through.
        if (s.mailbox == kNoMessage)
          s.pending = task.count;
        else
          take_parked(tile, task, iteration);
        if (s.pending > 0) {
          s.pc = pc;
          s.iteration = iteration;
          return;  // blocked: the last awaited delivery resumes the tile
        }
        if (task.stream) w.stream_inputs[tile].ingest_cycles += compiled[pc].serialization;
        ++w.events;
        ++pc;
        continue;
      case TaskOp::SkipUnlessExpert:
      case TaskOp::SkipIfExpert: {
        ++w.events;
        const bool routed =
            w.inputs.any_expert_routed(iteration, task.moe_layer, task_expert(task, w.set, tile), task.experts);
        pc += 1 + (routed == (task.op == TaskOp::SkipUnlessExpert) ? 0 : task.count);
        continue;
      }
      case TaskOp::Mark: {
        MarkRecord& record = w.marks[task.mark][iteration];
        if (task.mark + 1 == w.marks.size()) ++w.final_marks;
        if (s.now > record.cycle) {
          record.cycle = s.now;
          record.path = s.path;
        }
        ++w.events;
        ++pc;
        continue;
      }
    }
  }
  s.pc = pc;
  s.iteration = iteration;
}

template <bool kProfiled>
void Band<kProfiled>::take_parked(uint32_t tile, const Task& wait, uint32_t iteration) {
  uint32_t needed = wait.count;
  uint32_t* link = &world_.state[tile].mailbox;
  while (needed > 0 && *link != kNoMessage) {
    const uint32_t index = *link;
    Message& message = pool_[index];
    if (message.tag == wait.tag && message.iteration == iteration) {
      if (wait.stream) world_.stream_inputs[tile].tail = std::max(world_.stream_inputs[tile].tail, message.tail);
      *link = message.next;
      release(index);
      --needed;
    } else {
      link = &message.next;
    }
  }
  world_.state[tile].pending = needed;
}

template <bool kProfiled>
void Band<kProfiled>::receive(uint32_t message_index, uint64_t cycle) {
  const Message& message = pool_[message_index];
  arrive(message.tile, message.tag, message.iteration, message.path, message.tail, message_index, cycle);
}

template <bool kProfiled>
void Band<kProfiled>::arrive(uint32_t tile, uint16_t tag, uint32_t iteration, const CriticalPath& path, uint64_t tail,
                             uint32_t pooled, uint64_t cycle) {
  World& w = world_;
  ++w.events;
  TileState& s = w.state[tile];
  if (s.pending > 0) {
    const Task& wait = w.program_of(tile).tasks[s.pc];
    if (wait.tag == tag && s.iteration == iteration) {
      if (wait.stream) w.stream_inputs[tile].tail = std::max(w.stream_inputs[tile].tail, tail);
      const bool resumes = --s.pending == 0;
      if (resumes && wait.stream)
        w.stream_inputs[tile].ingest_cycles += w.compiled[w.set.tile_program[tile]][s.pc].serialization;
      // The critical path runs through the message that arrived last, after the tile got here.
      if (resumes && cycle > s.now) {
        s.now = cycle;
        s.path = path;
      }
      if (pooled != kNoMessage) release(pooled);
      if (resumes) {
        ++w.events;
        ++s.pc;
        run_tile(tile, cycle);
      }
      return;
    }
  }
  // Not awaited yet: park it, in arrival order, until its Wait.
  if (pooled == kNoMessage) {
    Message message;
    message.tile = tile;
    message.iteration = iteration;
    message.tag = tag;
    message.tail = tail;
    message.path = path;
    pooled = allocate(message);
  }
  uint32_t* link = &w.state[tile].mailbox;
  while (*link != kNoMessage) link = &pool_[*link].next;
  *link = pooled;
}

template <bool kProfiled>
uint64_t Band<kProfiled>::send(uint32_t tile, const Task& task, const CompiledTask& compiled, uint32_t iteration,
                               uint64_t cycle) {
  World& w = world_;
  const uint64_t message_iteration = uint64_t(iteration) + task.iteration_delta;
  if (message_iteration >= w.iterations) return cycle;  // feeds an iteration that never runs
  const uint32_t destination = uint32_t(int64_t(tile) + compiled.id_delta);
  if (task.stream) return send_stream(tile, task, compiled, destination, message_iteration, cycle);
  Transit transit;
  Category category = task.category;
  if (task.dwafer != 0) {
    category = Category::OffWafer;
    if (w.options.contention) {
      const uint32_t from = w.place.row(tile) / w.height;
      transit = reserve_offwafer(w, from, uint32_t(int64_t(from) + task.dwafer), task.bytes, cycle);
    } else {
      transit.arrival = cycle + compiled.cycles;
      w.link_hops += 1;
    }
  } else if (w.options.contention) {
    transit = reserve_route(w, tile, destination, task, compiled.serialization, cycle, /*stream=*/false);
  } else {
    transit.arrival = cycle + w.free_latency(tile, task, compiled);
    w.link_hops += route_hops(task);
  }
  Message message;
  message.tile = destination;
  message.iteration = uint32_t(message_iteration);
  message.tag = task.tag;
  message.path = w.state[tile].path;
  message.tail = transit.arrival;
  message.path[size_t(category)] += transit.arrival - cycle - transit.wait;
  message.path[size_t(Category::Contention)] += transit.wait;
  post(tile, message, transit.arrival);
  return cycle;
}

template <bool kProfiled>
uint64_t Band<kProfiled>::send_stream(uint32_t tile, const Task& task, const CompiledTask& compiled,
                                      uint32_t destination, uint64_t message_iteration, uint64_t cycle) {
  World& w = world_;
  StreamInputs& in = w.stream_inputs[tile];
  const uint64_t combine = compiled.combine_cycles;
  const uint64_t busy = std::max({compiled.serialization, combine, in.ingest_cycles});
  const uint64_t tail_departure = stream_tail_departure(cycle, busy, in.tail);
  in = StreamInputs{};
  w.compute_busy[tile] += combine;
  const uint64_t latency = compiled.cycles - compiled.serialization;
  Transit transit;
  if (w.options.contention) {
    transit = reserve_route(w, tile, destination, task, compiled.serialization, cycle, /*stream=*/true);
  } else {
    transit.arrival = cycle + w.free_latency(tile, task, compiled);
    w.link_hops += route_hops(task);
  }
  const uint64_t head = transit.arrival - compiled.serialization;
  Message message;
  message.tile = destination;
  message.iteration = uint32_t(message_iteration);
  message.tag = task.tag;
  message.tail = std::max(transit.arrival, tail_departure + latency + transit.wait);
  message.path = w.state[tile].path;
  message.path[size_t(task.category)] += head - cycle - transit.wait;
  message.path[size_t(Category::Contention)] += transit.wait;
  post(tile, message, head);
  return tail_departure;
}

template <bool kProfiled>
void Band<kProfiled>::multicast(uint32_t tile, const Task& task, const CompiledTask& compiled, uint32_t iteration,
                                uint64_t cycle) {
  const uint64_t message_iteration = uint64_t(iteration) + task.iteration_delta;
  if (message_iteration >= world_.iterations) return;
  // One injection; the sender's router copies it both ways when the task has tiles behind it too.
  uint64_t injected = 0;
  if (task.count > 0)
    start_multicast(tile, task, task.dir, task.count, compiled, message_iteration, cycle, &injected, false);
  if (task.count_back > 0)
    start_multicast(tile, task, opposite(task.dir), task.count_back, compiled, message_iteration, cycle, &injected,
                    task.count > 0);
}

template <bool kProfiled>
void Band<kProfiled>::start_multicast(uint32_t tile, const Task& task, Dir dir, uint32_t count,
                                      const CompiledTask& compiled, uint64_t message_iteration, uint64_t cycle,
                                      uint64_t* injected, bool already_injected) {
  World& w = world_;
  uint32_t index = w.free_multicast;
  if (index == kNoMessage) {
    index = uint32_t(w.multicasts.size());
    w.multicasts.emplace_back();
  } else {
    w.free_multicast = w.multicasts[index].next_free;
  }
  MulticastState& m = w.multicasts[index];
  m.path = w.state[tile].path;
  m.sent = cycle;
  m.source = tile;
  m.tile_step = int32_t(dir_dx(dir) + int64_t(dir_dy(dir)) * w.width);
  m.count = count;
  m.next_k = 1;
  m.iteration = uint32_t(message_iteration);
  m.tag = task.tag;
  m.category = task.category;
  if (w.options.contention) {
    reserve_multicast(w, tile, dir, task.relays, compiled.serialization, cycle, m, injected, already_injected);
  } else {
    m.arrival.resize(count);
    m.wait.assign(count, 0);
    // compiled.cycles is the first tile's message_cycles; the k-th adds k - 1 hops and its own detour.
    const FabricParams& fabric = w.hw.fabric;
    const uint64_t first_detour = detour_cycles(fabric, 1);
    for (uint32_t k = 1; k <= count; ++k)
      m.arrival[k - 1] = cycle + compiled.cycles + uint64_t(k - 1) * fabric.hop_latency_cycles +
                         w.multicast_detour_cycles(tile, dir, k) - first_detour;
    m.pass = m.arrival;
    w.link_hops += count;
  }
  post_multicast(tile, index, uint32_t(int64_t(tile) + m.tile_step), m.pass[0]);
}

template <bool kProfiled>
void Band<kProfiled>::post_multicast(uint32_t from, uint32_t multicast, uint32_t tile, uint64_t arrival) {
  const uint32_t band = world_.band_of(tile);
  if constexpr (kProfiled) profile_message(from, tile, band, arrival);
  if (band == index_)
    schedule(arrival, multicast | kMulticastBit);
  else
    sinks_[band]->continue_multicast(arrival, multicast);
}

template <bool kProfiled>
void Band<kProfiled>::step_multicast(uint32_t multicast, uint64_t cycle) {
  World& w = world_;
  MulticastState& m = w.multicasts[multicast];
  const uint32_t k = m.next_k;
  const uint32_t tile = uint32_t(int64_t(m.source) + int64_t(m.tile_step) * k);
  CriticalPath path = m.path;
  path[size_t(m.category)] += m.arrival[k - 1] - m.sent - m.wait[k - 1];
  path[size_t(Category::Contention)] += m.wait[k - 1];
  const uint16_t tag = m.tag;
  const uint32_t iteration = m.iteration;
  const uint64_t arrival = m.arrival[k - 1];
  // Pass the multicast on before the tile runs: running it may start new multicasts.
  if (k < m.count) {
    ++m.next_k;
    post_multicast(tile, multicast, uint32_t(int64_t(tile) + m.tile_step), m.pass[k]);
  } else {
    m.next_free = w.free_multicast;
    w.free_multicast = multicast;
  }
  if (arrival == cycle) {
    arrive(tile, tag, iteration, path, arrival, kNoMessage, cycle);
    return;
  }
  // This core's ejection ramp is busy: the delivery waits while the multicast moves on.
  Message message;
  message.tile = tile;
  message.iteration = iteration;
  message.tag = tag;
  message.tail = arrival;
  message.path = path;
  schedule(arrival, allocate(message) | kDeliveryBit);
}

template <bool kProfiled>
void Band<kProfiled>::post(uint32_t from, const Message& message, uint64_t arrival) {
  const uint32_t band = world_.band_of(message.tile);
  if constexpr (kProfiled) profile_message(from, message.tile, band, arrival);
  if (band == index_)
    schedule(arrival, allocate(message) | kDeliveryBit);
  else
    sinks_[band]->deliver(arrival, message);
}

template <bool kProfiled>
void Band<kProfiled>::profile_message(uint32_t from, uint32_t to, uint32_t to_band, uint64_t arrival) {
  const World& w = world_;
  w.parallelism->message(index_, to_band, w.place.row(from), w.place.x(from), w.place.row(to), w.place.x(to),
                         arrival - cycle_);
}

template class Band<false>;
template class Band<true>;

}  // namespace wafersim::sim
