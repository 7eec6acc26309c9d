#pragma once
// Runs a compiled decode plan on real numbers: every tile of a region holds
// its weight block and KV share, and each step's slices, partial sums and
// reduction trees are evaluated as the plan lays them out (docs/VALIDATION.md,
// "Numbers": what is and is not checked).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "sim/functional/numbers.h"

namespace wafersim::functional {

// The plan cannot be evaluated functionally (a model feature the evaluator
// does not cover), or it is inconsistent (a slice a step needs is not where
// the plan puts it): the message names the region, step and tile.
class FunctionalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Test-only: the message of line position `position` in the reduction tree of
// line `line` (a row of a GEMV to column, a column of a GEMV to row) is lost,
// as if the plan forgot that partial sum.
// In a MeshGEMM the line is the ring (the output slice) and the position the
// tile whose product the passing partial misses.
struct DroppedPartialSum {
  std::string region;  // "layer 1"
  std::string step;    // "o_proj"
  uint32_t line = 0;
  uint32_t position = 1;
  std::string plan;  // "prefill" or "decode" only; empty: both
};

// Where a step left a part of its output, for comparison with the reference.
struct TileSlice {
  uint32_t wafer = 0, x = 0, y = 0;
  std::vector<uint32_t> index;  // into the named vector
  std::vector<float> value;
};
struct StepOutput {
  const mapping::Region* region = nullptr;
  const char* step = "";
  const char* value = "";  // the reference's name for it (reference.h)
  std::vector<TileSlice> slices;
};
using StepObserver = std::function<void(const StepOutput&)>;
// The same for a chunk: the index of the token in its chunk, and its output.
using ChunkObserver = std::function<void(size_t, const StepOutput&)>;

struct TokenResult {
  std::vector<float> final_hidden, logits;
  uint32_t argmax = 0;
  std::map<int32_t, std::vector<uint32_t>> routed;  // per MoE layer: the experts the router picked
};

class Evaluator {
 public:
  // `plan` is the decode plan; `prefill`, when given, its prefill plan, whose
  // chunks write the KV entries decode then reads. Throws FunctionalError
  // when a plan uses what the evaluator does not cover.
  Evaluator(const mapping::Plan& plan, const ModelWeights& weights, uint32_t sequences,
            std::vector<DroppedPartialSum> faults = {}, const mapping::Plan* prefill = nullptr);
  ~Evaluator();
  // One token through the decode plan.
  TokenResult step(uint32_t sequence, uint32_t token, uint64_t position, const StepObserver& observe);
  // One chunk of a prompt (`tokens` at positions first_position onwards)
  // through the prefill plan, every token through a step before the next
  // step starts; then each token's last-layer output through the decode
  // plan's LM head (the prefill plan has none) for its final hidden state and logits.
  std::vector<TokenResult> prefill_chunk(uint32_t sequence, uint64_t first_position,
                                         const std::vector<uint32_t>& tokens, const ChunkObserver& observe);
  // Numbers held on tiles so far: weight blocks and KV entries (4-byte floats).
  uint64_t weight_floats() const;
  uint64_t kv_floats() const;
  uint64_t tiles_holding_weights() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Why the evaluator cannot run this plan, or "" when it can.
std::string unsupported_reason(const mapping::Plan& plan);
// The same from the model alone (its formats are what the evaluator may not
// emulate): what a check before any plan is compiled can tell.
std::string unsupported_reason(const workloads::ModelSpec& model);

}  // namespace wafersim::functional
