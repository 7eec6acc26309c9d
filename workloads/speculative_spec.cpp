#include "workloads/speculative_spec.h"

#include <cmath>
#include <filesystem>

#include "models/config/param_table.h"
#include "workloads/model_file.h"
#include "workloads/splitmix.h"
#include "workloads/workload_spec.h"

namespace wafersim::workloads {

namespace {

// Named again by the checks after the copy.
constexpr const char* kDraft = "workload.speculative.draft_model";
constexpr const char* kDraftTokens = "workload.speculative.draft_tokens";

// A zoo name, or a model file relative to the file that names it.
std::string draft_reference(const config::Config& config, const std::string& name) {
  for (const std::string& zoo : zoo_model_names())
    if (zoo == name) return name;
  const std::filesystem::path path(name);
  // A value from --set (no line) or standard input is relative to the working directory.
  const config::SourceLocation& where = config.where(kDraft);
  if (path.is_absolute() || where.line == 0 || where.file.empty() || where.file.front() == '<') return name;
  return (std::filesystem::path(where.file).parent_path() / path).string();
}

}  // namespace

uint32_t SpeculativeSpec::step_tokens(uint64_t sequence, uint64_t step) const {
  if (acceptance == AcceptanceKind::Fixed) {
    // A tolerance keeps a whole expectation (a = 0 or 1) from rounding one step short.
    const double expected = expected_tokens_per_step();
    auto total = [&](uint64_t steps) { return uint64_t(std::floor(double(steps) * expected + 1e-9)); };
    return uint32_t(total(step + 1) - total(step));
  }
  uint64_t state = seed;
  state = splitmix64_next(state) ^ sequence;
  state = splitmix64_next(state) ^ step;
  uint32_t accepted = 0;
  while (accepted < draft_tokens && double(splitmix64_next(state) >> 11) * 0x1.0p-53 < rate) ++accepted;
  return accepted + 1;
}

double SpeculativeSpec::expected_tokens_per_step() const {
  const double k = draft_tokens;
  if (rate >= 1) return k + 1;
  return (1 - std::pow(rate, k + 1)) / (1 - rate);
}

namespace {

using config::float_param;
using config::int_param;

const config::ParamTable<SpeculativeSpec>& speculative_table() {
  static const config::ParamTable<SpeculativeSpec> table =
      config::ParamTable<SpeculativeSpec>()
          .add(config::string_param(kDraft, "\"\"",
                                    "Draft model of speculative decoding: a zoo name or a model file (relative to the "
                                    "experiment file), with the target's vocabulary; empty: plain decoding"),
               &SpeculativeSpec::draft_source)
          .add(int_param(kDraftTokens, "tokens", "4", 1, 32,
                         "k: tokens the draft proposes per step; the target verifies k + 1 positions in one pass"),
               &SpeculativeSpec::draft_tokens)
          .add_enum<AcceptanceKind>(
              "workload.speculative.acceptance.kind",
              {{"fixed", AcceptanceKind::Fixed}, {"sampled", AcceptanceKind::Sampled}}, "fixed",
              "fixed: every step emits the expected (1 - a^(k+1)) / (1 - a) tokens; sampled: each step draws its "
              "accepted drafts (each accepted with probability `rate` until the first rejection) from a seeded "
              "generator",
              &SpeculativeSpec::acceptance)
          .add(float_param("workload.speculative.acceptance.rate", "", "0.7", 0, 1,
                           "a: probability that a draft token is accepted, given that every draft before it was"),
               &SpeculativeSpec::rate)
          .add(int_param("workload.speculative.acceptance.seed", "", "1", 0, 9.0e15,
                         "Seed of the sampled acceptance draws"),
               &SpeculativeSpec::seed)
          .add_enum<VerifyKind>(
              "workload.speculative.verify", {{"pipelined", VerifyKind::Pipelined}, {"chunk", VerifyKind::Chunk}},
              "pipelined",
              "How the target verifies the k + 1 positions in one pass: pipelined, one after another through its "
              "layer pipeline (a layer takes the next position once it has passed one on); chunk, all together "
              "through each step as a prefill chunk (a step works on all of them first)",
              &SpeculativeSpec::verify);
  return table;
}

}  // namespace

void declare_speculative_params(config::Schema& schema) { speculative_table().declare(schema); }

std::optional<SpeculativeSpec> speculative_from_config(const config::Config& config, const ModelSpec& target,
                                                       const WorkloadSpec& workload) {
  SpeculativeSpec spec = speculative_table().read(config);
  if (spec.draft_source.empty()) return std::nullopt;
  try {
    spec.draft = load_model(draft_reference(config, spec.draft_source)).model;
  } catch (const config::ConfigError& error) {
    config.fail(kDraft, std::string("cannot load the draft model: ") + error.what());
  }
  if (spec.draft.vocab_size != target.vocab_size)
    config.fail(kDraft, "the draft " + spec.draft.name + " has a vocabulary of " +
                            std::to_string(spec.draft.vocab_size) + " tokens and the target " + target.name +
                            " one of " + std::to_string(target.vocab_size) +
                            ": the target can only verify tokens of its own vocabulary; choose a draft of the same "
                            "tokenizer");
  const uint64_t deepest = workload.max_context() + spec.extra_context();
  for (const ModelSpec* model : {&target, static_cast<const ModelSpec*>(&spec.draft)})
    if (deepest > model->max_positions)
      config.fail_given({kDraftTokens, "workload.decode_tokens", "workload.prompt_tokens"},
                        "prompt_tokens + decode_tokens + draft_tokens = " + std::to_string(deepest) +
                            " positions, more than " + model->name + "'s max_positions (" +
                            std::to_string(model->max_positions) + ")");
  return spec;
}

}  // namespace wafersim::workloads
