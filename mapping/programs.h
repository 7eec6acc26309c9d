#pragma once
// From built regions to what the engine runs: the sends that join region roots
// and every tile's program, deduplicated; shared by the decode and prefill plans.
#include "mapping/plan.h"

namespace wafersim::mapping {

// Region roots wait for the input, run their chain and send on. In decode the
// LM head feeds the embedding the sequence's next token, `batch` iterations
// later; a prefill ends at the last layer, and its chunks need no feed.
void connect_regions(Plan& plan);

// The tile programs of every block, and the inputs present at cycle 0: the
// first token of each sequence in decode, every chunk of every prompt in prefill.
void build_programs(Plan& plan);

// Frees what the regions' blocks hold only for build_programs to emit (the
// per-tile task lists of Block: prologues, epilogues, dispatch and combine
// tasks), once it has run: the closed form, the metrics and the reports read
// the steps and the ProgramSet, never these. They take about 130 MB in a full
// run of gpt-oss-120b on three wafers, held through the whole simulation
// otherwise. A plan released this way cannot have its programs built again.
void release_program_sources(Plan& plan);

}  // namespace wafersim::mapping
