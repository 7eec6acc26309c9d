#pragma once
// The MoE layer's dispatch: the step kind and its factory (moe_dispatch.cpp).
#include <memory>
#include <vector>

#include "mapping/steps.h"

namespace wafersim::mapping {

// Sends the vector to the routed experts' rows, waits for their results and
// combines them: all of them at the root (mapping.moe_combine: root), or the
// one sum the combining tree streams to it (tree). The expert blocks' own
// chains are the region's other blocks (build_moe, regions.cpp).
class DispatchStep : public Step {
 public:
  // One expert block, as the dispatch times it.
  struct Expert {
    int32_t routed_index;  // -1 for a shared expert
    Timed result;          // root: from dispatch to the result at the layer root, contention-free
    // tree: from dispatch to the vector at the block root, and to its own result there
    Timed arrival, ready;
    int32_t row_child = -1, column_child = -1;  // indices into the experts, -1 for none
    uint64_t latency = 0;                       // tree: its stream's head to its parent, contention-free
    uint64_t serialization = 0;                 // tree: of its stream
    uint64_t add_cycles = 0;                    // tree: adding its own result into the stream
  };

  using Step::Step;
  void accept(StepVisitor& visitor) const final { visitor.visit(*this); }
};

// `head_sends` leave the root; `passing` are the tasks of the root column's
// other tiles (the waits of a dispatch multicast that passes them). Root:
// `results` messages and the root's `combine`. Tree: one stream of
// `stream_bytes` per token, written out as activations by `combine`.
std::unique_ptr<Step> moe_dispatch_step(const StepEnv& env, std::vector<Task> head_sends, std::vector<Task> passing,
                                        std::vector<DispatchStep::Expert> experts, uint32_t moe_layer, uint32_t results,
                                        const Work& combine, bool tree, uint64_t stream_bytes);

}  // namespace wafersim::mapping
