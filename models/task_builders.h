#pragma once
// One builder per task kind. A builder sets the op and the kind's defaults and
// names the fields that kind reads, so a site says what it means:
//   SendTask().dx(1).bytes(64).tag(3)
//   WaitTask().tag(3).messages(2)
// A builder converts to a Task wherever one is expected. Fields a kind does not
// read keep the Task defaults, so equal intents build equal tasks (which the
// compiler's program deduplication relies on).
#include <cstdint>

#include "models/tile_program.h"

namespace wafersim {

template <class Self>
class TaskBuilder {
 public:
  Self& layer(uint16_t layer) { return set(task_.layer, layer); }  // for per-layer statistics
  operator Task() const { return task_; }

 protected:
  explicit TaskBuilder(TaskOp op) { task_.op = op; }
  template <class Field>
  Self& set(Field& field, const Field& value) {
    field = value;
    return static_cast<Self&>(*this);
  }
  Task task_;
};

// The fields of a message, Send or Multicast. Transit time counts as Fabric
// on the critical path unless the site says otherwise.
template <class Self>
class MessageBuilder : public TaskBuilder<Self> {
 public:
  Self& bytes(uint32_t bytes) { return this->set(this->task_.bytes, bytes); }
  Self& tag(uint16_t tag) { return this->set(this->task_.tag, tag); }
  Self& relays(uint32_t relays) { return this->set(this->task_.relays, relays); }  // relay stages on the route
  Self& category(Category category) { return this->set(this->task_.category, category); }

 protected:
  explicit MessageBuilder(TaskOp op) : TaskBuilder<Self>(op) { this->task_.category = Category::Fabric; }
};

class ComputeTask : public TaskBuilder<ComputeTask> {
 public:
  ComputeTask() : TaskBuilder(TaskOp::Compute) {}
  ComputeTask& work(const Work& work) { return set(task_.work, work); }
  ComputeTask& dtype(Dtype dtype) { return set(task_.dtype, dtype); }
  ComputeTask& category(Category category) { return set(task_.category, category); }
  // Work per KV position this tile holds (positions p with p % kv_stride == kv_offset,
  // at most kv_window of them when the window is not 0); kv_offset may be Task::kTileParam.
  ComputeTask& work_per_position(const Work& work) { return set(task_.work_per_position, work); }
  ComputeTask& kv_stride(uint32_t stride) { return set(task_.kv_stride, stride); }
  ComputeTask& kv_offset(uint32_t offset) { return set(task_.kv_offset, offset); }
  ComputeTask& kv_window(uint32_t window) { return set(task_.kv_window, window); }
  // Ends no earlier than the streams the tile's streamed Waits took in (plus one add).
  ComputeTask& after_streams() { return set(task_.stream, true); }
};

// To the tile (dx, dy) away on wafer (own + dwafer).
class SendTask : public MessageBuilder<SendTask> {
 public:
  SendTask() : MessageBuilder(TaskOp::Send) {}
  SendTask& dx(int32_t dx) { return set(task_.dx, dx); }
  SendTask& dy(int32_t dy) { return set(task_.dy, dy); }
  SendTask& dwafer(int32_t dwafer) { return set(task_.dwafer, dwafer); }
  // The message belongs to iteration (current + delta).
  SendTask& iteration_delta(uint32_t delta) { return set(task_.iteration_delta, delta); }
  // The y leg of the route before its x leg.
  SendTask& y_first(bool first = true) { return set(task_.y_first, first); }
  SendTask& sidestep(int32_t tiles) { return set(task_.sidestep, tiles); }
  // A stream that combines `work` (in `dtype`) with the streams the tile's
  // streamed Waits took in, as their wavelets pass (models/cost.h,
  // stream_tail_departure).
  SendTask& streamed(const Work& combine, Dtype dtype) {
    set(task_.work, combine);
    set(task_.dtype, dtype);
    return set(task_.stream, true);
  }
};

// Along `dir`, delivered at each of the next `tiles` tiles.
class MulticastTask : public MessageBuilder<MulticastTask> {
 public:
  MulticastTask() : MessageBuilder(TaskOp::Multicast) {}
  MulticastTask& dir(Dir dir) { return set(task_.dir, dir); }
  MulticastTask& tiles(uint32_t tiles) { return set(task_.count, tiles); }
  // Also the `tiles` tiles the other way, copied by the sender's router from the same injection.
  MulticastTask& tiles_back(uint32_t tiles) { return set(task_.count_back, tiles); }
};

// Blocks until `messages` messages with `tag` of this iteration have arrived.
class WaitTask : public TaskBuilder<WaitTask> {
 public:
  WaitTask() : TaskBuilder(TaskOp::Wait) {}
  WaitTask& tag(uint16_t tag) { return set(task_.tag, tag); }
  WaitTask& messages(uint32_t messages) { return set(task_.count, messages); }
  // Resumes when the heads of the messages, `bytes` in all, arrive; a later
  // streamed Send or Compute waits for their tails and their ingest.
  WaitTask& heads_only(uint32_t bytes) {
    set(task_.bytes, bytes);
    return set(task_.stream, true);
  }
};

// Skips the next `tasks` tasks unless expert `expert` (or Task::kTileParam) of
// MoE layer `moe_layer` is routed (or, with experts(n), any of n experts from it).
class SkipUnlessExpertTask : public TaskBuilder<SkipUnlessExpertTask> {
 public:
  SkipUnlessExpertTask() : TaskBuilder(TaskOp::SkipUnlessExpert) {}
  SkipUnlessExpertTask& expert(uint32_t expert) { return set(task_.expert, expert); }
  // Asks from the tile's own expert + `offset` on (Task::kTileParam): blocks
  // of different experts then share programs.
  SkipUnlessExpertTask& own_expert(uint32_t offset = 0) {
    set(task_.expert_offset, offset);
    return set(task_.expert, Task::kTileParam);
  }
  SkipUnlessExpertTask& moe_layer(uint32_t moe_layer) { return set(task_.moe_layer, moe_layer); }
  // Skips unless any of `experts` experts from `expert` (or from the tile's own + offset) is routed.
  SkipUnlessExpertTask& experts(uint32_t experts) { return set(task_.experts, experts); }
  SkipUnlessExpertTask& tasks(uint32_t tasks) { return set(task_.count, tasks); }
};

// Skips the next `tasks` tasks if any of `experts` experts from `expert` of
// MoE layer `moe_layer` is routed: with a SkipUnlessExpertTask after it, a
// task runs only when one set of experts is idle and another is not.
class SkipIfExpertTask : public TaskBuilder<SkipIfExpertTask> {
 public:
  SkipIfExpertTask() : TaskBuilder(TaskOp::SkipIfExpert) {}
  SkipIfExpertTask& expert(uint32_t expert) { return set(task_.expert, expert); }
  SkipIfExpertTask& own_expert(uint32_t offset = 0) {
    set(task_.expert_offset, offset);
    return set(task_.expert, Task::kTileParam);
  }
  SkipIfExpertTask& experts(uint32_t experts) { return set(task_.experts, experts); }
  SkipIfExpertTask& moe_layer(uint32_t moe_layer) { return set(task_.moe_layer, moe_layer); }
  SkipIfExpertTask& tasks(uint32_t tasks) { return set(task_.count, tasks); }
};

// Records when the tile gets here, in mark slot `slot`.
class MarkTask : public TaskBuilder<MarkTask> {
 public:
  MarkTask() : TaskBuilder(TaskOp::Mark) {}
  MarkTask& slot(uint32_t slot) { return set(task_.mark, slot); }
};

}  // namespace wafersim
