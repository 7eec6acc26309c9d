#pragma once
// The decode metrics of speculative decoding, from two timelines: the draft's
// k decode tokens of every sequence, and the target's verify pass of every
// sequence. A speculative step of the batch is the one, then the other (the
// draft needs the last verified token, the target the k drafts); steps repeat
// until every sequence has its decode tokens. Whichever backend made the
// timelines, the same acceptance draws give the same step schedule, so `run`
// with contention off and `analytic` agree to the cycle.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mapping/plan.h"
#include "mapping/timeline.h"
#include "sim/experiment/metrics.h"
#include "sim/experiment/speculative_figures.h"
#include "workloads/speculative_spec.h"

namespace wafersim {

// Tokens each sequence emits at each step until it has `decode_tokens`
// (SpeculativeSpec::step_tokens; the last step may pass them): [sequence][step].
std::vector<std::vector<uint32_t>> speculative_draws(const workloads::SpeculativeSpec& spec, uint32_t batch,
                                                     uint64_t decode_tokens);

// `draft` is the draft's plan timed for k tokens per sequence, `verify` the
// target's verify plan; `target` the target's decode plan (for its name and clock).
// metrics.speculative is filled; the rest of the DecodeMetrics describe the
// schedule: a step's time shared by the tokens it emits.
DecodeMetrics speculative_decode_metrics(const workloads::SpeculativeSpec& spec, const mapping::Plan& target,
                                         const mapping::Plan& draft, const mapping::DecodeTimeline& draft_timeline,
                                         const mapping::Plan& verify, const mapping::DecodeTimeline& verify_timeline,
                                         uint32_t wafer_rows);

// A one-region timeline whose iteration s < batch ends when sequence s's first
// speculative step does (the draft's k tokens, then its verify pass): what
// prefill_metrics reads for the time to first token.
// The verify timeline's last `batch` iterations are the sequences' last positions.
mapping::DecodeTimeline first_step_timeline(const SpeculativeMetrics& speculative,
                                            const mapping::DecodeTimeline& verify_timeline, uint32_t batch);

}  // namespace wafersim
