#include "sim/experiment/speculative_placement.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mapping/region.h"

namespace wafersim {

namespace {

// The KV cache must hold the verify pass's k positions past the decoded tokens.
workloads::WorkloadSpec placed_workload(const Experiment& experiment) {
  workloads::WorkloadSpec workload = experiment.workload;
  workload.decode_tokens += experiment.speculative->extra_context();
  return workload;
}

// Weights and KV cache of every region at the workload's largest context.
uint64_t model_bytes(const workloads::ModelSpec& model, uint64_t max_context) {
  using mapping::RegionKind;
  uint64_t bytes = mapping::region_weight_bytes(model, RegionKind::Embedding, -1) +
                   mapping::region_weight_bytes(model, RegionKind::Head, -1);
  for (uint32_t layer = 0; layer < model.n_layers; ++layer) {
    const RegionKind kind = model.is_moe_layer(layer) ? RegionKind::Moe : RegionKind::Dense;
    bytes += mapping::region_weight_bytes(model, kind, int32_t(layer)) +
             mapping::region_kv_bytes(model, kind, int32_t(layer), max_context);
  }
  return bytes;
}

// A plan compiled for the deeper context, timed for the workload's own tokens.
mapping::Plan for_workload(mapping::Plan plan, const Experiment& experiment) {
  plan.workload.decode_tokens = experiment.workload.decode_tokens;
  plan.programs.iterations = uint64_t(plan.workload.batch) * plan.workload.decode_tokens;
  return plan;
}

HardwareSpec band(const HardwareSpec& hw, uint32_t rows, uint32_t wafers) {
  HardwareSpec out = hw;
  out.grid_height = rows;
  out.wafers = wafers;
  return out;
}

bool draft_fits(const Experiment& experiment, uint32_t rows) {
  try {
    mapping::compile_plan(band(experiment.hardware, rows, 1), experiment.speculative->draft,
                          placed_workload(experiment), experiment.mapping);
    return true;
  } catch (const mapping::DoesNotFitError&) {
    return false;
  }
}

}  // namespace

SpeculativeRows speculative_rows(const Experiment& experiment) {
  const HardwareSpec& hw = experiment.hardware;
  const uint32_t height = hw.grid_height;
  const uint64_t context = placed_workload(experiment).max_context();
  const double draft = double(model_bytes(experiment.speculative->draft, context));
  const double target = double(model_bytes(experiment.model, context));
  // The draft's share of wafer 0 is its share of the bytes that wafer holds;
  // with a fixed wafer count the target's bytes spread over all of them.
  const double wafers = hw.wafers > 0 ? double(hw.wafers) : 1.0;
  const double share = draft / (draft + target / wafers);
  uint32_t rows = std::clamp(uint32_t(std::ceil(share * height)), 1u, height - 1);
  // The bytes are a lower bound (buffers, runtime reserve, rounding to tiles): grow the band until the draft fits.
  while (!draft_fits(experiment, rows)) {
    if (rows >= height - 1)
      throw mapping::DoesNotFitError(fmt::format(
          "the draft {} does not fit beside the target {}: it does not fit even {} of the {} rows of a {} wafer",
          experiment.speculative->draft.name, experiment.model.name, height - 1, height, hw.name));
    rows = std::min(height - 1, std::max(rows + 1, rows + rows / 4));
  }
  return {height - rows, rows};
}

mapping::Plan compile_target_plan(const Experiment& experiment, const SpeculativeRows& rows) {
  try {
    return for_workload(mapping::compile_plan(band(experiment.hardware, rows.target, experiment.hardware.wafers),
                                              experiment.model, placed_workload(experiment), experiment.mapping),
                        experiment);
  } catch (const mapping::DoesNotFitError& error) {
    throw mapping::DoesNotFitError(fmt::format(
        "the draft {} does not fit beside the target {}: with the draft on {} of the {} rows of wafer 0, the target "
        "on the other {} rows: {}",
        experiment.speculative->draft.name, experiment.model.name, rows.draft, rows.draft + rows.target, rows.target,
        error.what()));
  }
}

mapping::Plan compile_draft_plan(const Experiment& experiment, const SpeculativeRows& rows) {
  return for_workload(mapping::compile_plan(band(experiment.hardware, rows.draft, 1), experiment.speculative->draft,
                                            placed_workload(experiment), experiment.mapping),
                      experiment);
}

}  // namespace wafersim
