#include "sim/reports/functional_check.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/experiment/process_memory.h"
#include "sim/functional/check.h"

namespace wafersim::reports {

namespace {

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nullptr; }

}  // namespace

void refuse_impossible_functional_check(const Experiment& experiment) {
  if (!experiment.sim.functional) return;
  const std::string why = functional::unsupported_reason(experiment.model);
  if (!why.empty()) experiment.config.fail("sim.functional", "the functional check cannot run: " + why);
  // Refused before it starts rather than killed halfway: every weight as a float on its tile and as a double in
  // the reference (12 bytes a parameter, docs/VALIDATION.md), the KV cache the same way.
  const workloads::ModelSpec& m = experiment.model;
  const workloads::WorkloadSpec& w = experiment.workload;
  const double kv_elements = double(w.batch) * double(w.max_context()) * m.n_layers * 2.0 * m.n_kv_heads * m.head_dim;
  double needed = 12.0 * double(workloads::count_params(m).total) + 12.0 * kv_elements;
  if (w.prefill) {
    // A chunk's step outputs, kept until its tokens are compared: about 10 d_model-wide vectors, three of the
    // QKV width and four of the FFN width per layer, and the logits, each element an index and a value.
    const double qkv = double(m.n_heads + 2 * m.n_kv_heads) * m.head_dim;
    const double ffn = double(std::max(m.ffn_dim, m.moe.expert_ffn_dim));
    const double per_token = double(m.n_layers) * (10.0 * m.d_model + 3.0 * qkv + 4.0 * ffn) + m.vocab_size;
    needed += 8.0 * double(w.prefill_chunk_size()) * per_token;
  }
  const uint64_t available = memory_available_bytes();
  if (available != UINT64_MAX && needed > double(available))
    experiment.config.fail("sim.functional", fmt::format("the functional check needs about {:.1f} GB of memory and "
                                                         "{:.1f} GB are available; a smaller model or workload fits",
                                                         needed / 1e9, double(available) / 1e9));
}

void add_functional_check(const Experiment& experiment, const mapping::Plan& plan, const mapping::Plan* prefill,
                          Report& report) {
  if (!experiment.sim.functional) return;  // refuse_impossible_functional_check ran before the timing
  functional::FunctionalReport result;
  try {
    result = functional::check_functional(plan, {}, prefill);
  } catch (const functional::FunctionalError& error) {  // the prefill plan, which the early refusal did not see
    experiment.config.fail("sim.functional", std::string("the functional check cannot run: ") + error.what());
  }
  nlohmann::json& out = report.document["functional"];
  out["max_abs_error"] = finite_or_null(result.max_abs_error);
  out["max_rel_error"] = finite_or_null(result.max_rel_error);
  out["argmax_agreement"] = result.argmax_agreement;
  out["tolerance"] = result.tolerance;
  out["tokens"] = result.tokens;
  out["prefill_checked"] = result.prefill_checked;
  out["passed"] = result.passed;
  out["wall_seconds"] = result.wall_seconds;
  out["weight_bytes"] = result.weight_bytes;
  out["kv_bytes"] = result.kv_bytes;
  out["tiles"] = result.tiles;
  out["router_near_ties"] = result.router_near_ties;
  nlohmann::json first = nullptr;
  if (result.first) {
    const functional::Divergence& d = *result.first;
    first = {{"plan", d.plan},
             {"sequence", d.sequence},
             {"position", d.position},
             {"region", d.region},
             {"layer", d.layer},
             {"step", d.step},
             {"value", d.value},
             {"wafer", d.wafer},
             {"x", d.x},
             {"y", d.y},
             {"rel_error", finite_or_null(d.rel_error)},
             {"error", d.what}};
  }
  out["first_divergence"] = first;
  const std::string summary = functional::functional_summary(result);
  report.table += summary + "\n";
}

std::string functional_failure(const Report& report) {
  const auto found = report.document.find("functional");
  if (found == report.document.end() || found->value("passed", true)) return "";
  const nlohmann::json& f = *found;
  const std::string error = f["max_rel_error"].is_null()
                                ? "the evaluation stopped"
                                : fmt::format("max rel error {:.3g}", f["max_rel_error"].get<double>());
  std::string message = fmt::format("functional: the numbers diverge from the reference ({} vs tolerance {:.3g})",
                                    error, f["tolerance"].get<double>());
  const nlohmann::json& d = f["first_divergence"];
  if (d.is_null()) return message;
  if (!d["error"].get<std::string>().empty())
    return message + fmt::format("; first divergence: {} plan, sequence {} position {}: {}",
                                 d["plan"].get<std::string>(), d["sequence"].dump(), d["position"].dump(),
                                 d["error"].get<std::string>());
  return message + fmt::format(
                       "; first divergence: {} plan, sequence {} position {}, {} (layer {}), step {}, tile "
                       "(wafer {}, x {}, y {}): relative error {:.3g}",
                       d["plan"].get<std::string>(), d["sequence"].dump(), d["position"].dump(),
                       d["region"].get<std::string>(), d["layer"].dump(), d["step"].get<std::string>(),
                       d["wafer"].dump(), d["x"].dump(), d["y"].dump(),
                       d["rel_error"].is_null() ? INFINITY : d["rel_error"].get<double>());
}

}  // namespace wafersim::reports
