#pragma once
// A serving run: requests arrive, pass the transport, rate limits and class
// queues, are admitted into the continuous batch (KV cache permitting) and
// stream their prefill chunks and decode tokens through the layer pipeline.
// A request-level discrete-event loop in plain C++; every region root is a
// server that takes items in the order the scheduler releases them, as in the
// closed form of the plan (mapping::analytic_timeline). docs/SERVING.md.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/serving/step_costs.h"
#include "workloads/serving/request_stream.h"
#include "workloads/serving/serving_spec.h"

namespace wafersim::serving {

enum class Outcome : uint8_t { Completed, RejectedRateLimit, RejectedQueueFull, RejectedContext, Unfinished };
const char* outcome_name(Outcome outcome);

// One request (a turn of a session), with its times in seconds from the start.
struct RequestRecord {
  uint64_t id = 0;
  workloads::RequestClass request_class = workloads::RequestClass::Realtime;
  uint64_t session = 0;
  uint32_t turn = 0;
  uint64_t prompt_tokens = 0;     // new tokens of this turn
  uint64_t context_tokens = 0;    // positions attended by its last token
  uint64_t prefilled_tokens = 0;  // prompt positions actually prefilled (prefix reuse skips the cached ones)
  uint64_t output_tokens = 0;
  Outcome outcome = Outcome::Unfinished;
  double sent_s = 0;  // the client sends it
  double server_arrival_s = 0;
  double admitted_s = -1;     // joins the batch
  double first_token_s = -1;  // reaches the client
  double last_token_s = -1;   // reaches the client
  uint32_t preemptions = 0;
  uint64_t tokens_done = 0;
};

struct ServingCounters {
  uint64_t preemptions = 0;
  uint64_t evictions = 0;             // session caches dropped to make room
  uint64_t reused_prefix_tokens = 0;  // prompt positions not prefilled again thanks to a cached session
  uint64_t prefill_chunks = 0, decode_tokens = 0;
  uint64_t decode_steps = 0;  // decode items: one per token, or per speculative step
  double busy_cycles = 0;     // the busiest region root's busy cycles
  double end_cycles = 0;      // when the last item left the pipeline (or the clock stopped)
  // Cycles during which a queued request could not join the batch because it
  // was full (scheduler.max_batch, nothing to preempt) or because the KV share
  // could not hold it; and the batch's size summed over cycles (its mean: over end_cycles).
  double blocked_by_max_batch_cycles = 0, blocked_by_kv_cycles = 0;
  double batch_size_cycles = 0;
  // Decode items (prefill chunks): cycles from ready to entering the pipeline,
  // and from entering it to leaving the LM head (the last region), summed.
  double decode_entry_wait_cycles = 0, decode_pipeline_cycles = 0;
  double prefill_entry_wait_cycles = 0, prefill_pipeline_cycles = 0;
};

struct ServingRun {
  std::vector<RequestRecord> requests;  // by id (order of arrival at the client)
  ServingCounters counters;
  double clock_hz = 1;
  uint64_t kv_capacity_tokens = 0;
};

ServingRun simulate_serving(const workloads::ServingSpec& spec, const workloads::RequestStream& stream,
                            const StepCosts& costs, uint64_t kv_capacity_tokens, double clock_ghz);

}  // namespace wafersim::serving
