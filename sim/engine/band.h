#pragma once
// One band of the mesh: whole rows, simulated by one SC_METHOD that
// drains the band's timing wheel. Bands hand each other messages through
// SystemC ports and exports (MessageSink).
#include <cstdint>
#include <systemc>
#include <vector>

#include "sim/engine/fabric_timing.h"
#include "sim/engine/tile_object.h"
#include "sim/engine/timing_wheel.h"
#include "sim/engine/world.h"

namespace wafersim::sim {

// What a band offers its neighbours: a message to deliver to one of its tiles.
class MessageSink : public virtual sc_core::sc_interface {
 public:
  virtual void deliver(uint64_t cycle, const Message& message) = 0;
  // The next tile of multicast `multicast` (World::multicasts) is one of this band's.
  virtual void continue_multicast(uint64_t cycle, uint32_t multicast) = 0;
};

// kProfiled: the band reports its events, wake-ups and messages to
// World::parallelism (EngineOptions::parallelism_profile). A separate
// instantiation, so that the engine's usual path carries none of it.
template <bool kProfiled>
class Band : public sc_core::sc_module, public MessageSink {
 public:
  sc_core::sc_export<MessageSink> in;
  sc_core::sc_port<MessageSink, 0> out;  // bound to every band's `in`, in band order

  // Tiles [first_tile, end_tile) belong to this band.
  Band(const sc_core::sc_module_name& name, World& world, uint32_t index, uint32_t first_tile, uint32_t end_tile);

  void deliver(uint64_t cycle, const Message& message) override;
  void continue_multicast(uint64_t cycle, uint32_t multicast) override;
  // Before the simulation starts: a tile that runs from cycle 0, a message present at cycle 0.
  void start_tile(uint32_t tile) { wheel_.push(0, tile); }
  void inject(const Message& message);

 private:
  // An event is a tile id (run the tile), a message index or a multicast index.
  static constexpr uint32_t kDeliveryBit = 0x80000000u;
  static constexpr uint32_t kMulticastBit = 0x40000000u;
  static constexpr uint32_t kIndexMask = 0x3fffffffu;

  void end_of_elaboration() override;
  void wake();
  // Runs every event of `cycle`.
  [[gnu::always_inline]] inline void drain(uint64_t cycle);
  [[gnu::always_inline]] inline void dispatch(uint32_t event, uint64_t cycle);
  // A profiled band's dispatch: charges the event's count to its tile.
  void profile_event(uint32_t event, uint64_t cycle);
  // A message from tile `from` to tile `to` of band `to_band`, for World::parallelism.
  [[gnu::cold, gnu::noinline]] void profile_message(uint32_t from, uint32_t to, uint32_t to_band, uint64_t arrival);
  // Takes the parked messages `wait` awaits; sets the tile's pending to those still missing.
  void take_parked(uint32_t tile, const Task& wait, uint32_t iteration);
  void multicast(uint32_t tile, const Task& task, const CompiledTask& compiled, uint32_t iteration, uint64_t cycle);
  // One direction of a multicast (reserve_multicast says what `injected` and `already_injected` mean).
  void start_multicast(uint32_t tile, const Task& task, Dir dir, uint32_t count, const CompiledTask& compiled,
                       uint64_t message_iteration, uint64_t cycle, uint64_t* injected, bool already_injected);
  void wake_at(uint64_t cycle, uint64_t now);
  uint32_t grow_pool(const Message& message);  // allocate's rare path, out of line
  void release(uint32_t message_index);
  void report_progress(uint64_t cycle);

  // The path of almost every event, inlined where it is called (band.cpp
  // alone): their calls, frames and copied arguments cost about as much as
  // their bodies. Cachegrind, the quickstart's 4-token decode: 25.3 G
  // instructions called, 21.6 G inlined.
  [[gnu::always_inline]] inline void run_tile(uint32_t tile, uint64_t cycle);
  [[gnu::always_inline]] inline void receive(uint32_t message_index, uint64_t cycle);
  // A message reaches `tile` (its tail at `tail`): resumes it if it completes
  // its Wait, else parks it (`pooled` is its pool index, or kNoMessage when it has none yet).
  [[gnu::always_inline]] inline void arrive(uint32_t tile, uint16_t tag, uint32_t iteration, const CriticalPath& path,
                                            uint64_t tail, uint32_t pooled, uint64_t cycle);
  // Returns when the sender is free again: `cycle`, or for a stream when its tail has left.
  [[gnu::always_inline]] inline uint64_t send(uint32_t tile, const Task& task, const CompiledTask& compiled,
                                              uint32_t iteration, uint64_t cycle);
  [[gnu::always_inline]] inline uint64_t send_stream(uint32_t tile, const Task& task, const CompiledTask& compiled,
                                                     uint32_t destination, uint64_t message_iteration, uint64_t cycle);
  [[gnu::always_inline]] inline void step_multicast(uint32_t multicast, uint64_t cycle);
  // `from` is the tile the message leaves (for World::parallelism only).
  [[gnu::always_inline]] inline void post(uint32_t from, const Message& message, uint64_t arrival);
  [[gnu::always_inline]] inline void post_multicast(uint32_t from, uint32_t multicast, uint32_t tile, uint64_t arrival);
  [[gnu::always_inline]] inline void schedule(uint64_t cycle, uint32_t event);
  [[gnu::always_inline]] inline uint32_t allocate(const Message& message);

  World& world_;
  uint32_t index_;
  uint64_t ticks_per_cycle_;
  // A 262,144-cycle window: prefill chunks make tasks and messages a chunk's
  // tokens long (tens of thousands of cycles), and events past the window go
  // through the wheel's heap. Measured on an 8B prefill of 4 chunks on a full
  // WSE-3: 10.0 s user with 16 bits against 12.1-18.4 s with 12; with 8 bands,
  // a 4,096-token prefill took 29.5-31.9 s with 18 bits against 35.1-35.3 s
  // with 16 (4.9 % fewer instructions), decode alone the same, and memory grows
  // by 1.5 MB per band.
  static constexpr uint32_t kWheelBits = 18;
  TimingWheel wheel_{kWheelBits};
  std::vector<Message> pool_;
  uint32_t free_ = kNoMessage;
  std::vector<MessageSink*> sinks_;
  sc_core::sc_event wake_event_;
  uint64_t scheduled_ = UINT64_MAX;  // cycle of the pending wake-up
  bool running_ = false;
  uint64_t cycle_ = 0;                  // cycle of the current (or last) wake-up
  TileObject* tile_objects_ = nullptr;  // one block, never destroyed (bulk teardown at process exit)
};

}  // namespace wafersim::sim
