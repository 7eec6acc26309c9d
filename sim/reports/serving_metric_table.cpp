#include "sim/reports/serving_metric_table.h"

#include <array>

#include "sim/experiment/version.h"
#include "sim/reports/config_json.h"
#include "sim/reports/output.h"

namespace wafersim::reports {

namespace {

using serving::ClassMetrics;
using serving::Distribution;

std::vector<ClassFigure> build_class_table() {
  std::vector<ClassFigure> table;
  auto add = [&table](std::string path, std::string unit, std::string description, unsigned flags,
                      std::optional<TableRow> row, std::function<nlohmann::json(const ClassMetrics&)> read) {
    table.push_back({std::move(path), std::move(unit), std::move(description), flags, std::move(row), std::move(read)});
  };
  auto count_row = [](const char* label) { return TableRow{label, "requests", 1, 0}; };
  add("requests.offered", "requests", "reached the server before the end of the run", 0, count_row("requests offered"),
      [](const ClassMetrics& m) { return m.offered; });
  add("requests.completed", "requests", "last token left the LM head", kSweepDefault, count_row("requests completed"),
      [](const ClassMetrics& m) { return m.completed; });
  add("requests.rejected.total", "requests", "rejected, for any reason", kSweepDefault, std::nullopt,
      [](const ClassMetrics& m) { return m.rejected(); });
  add("requests.rejected.rate_limit", "requests", "rejected by the class's rate limit", 0,
      count_row("rejected: rate limit"), [](const ClassMetrics& m) { return m.rejected_rate_limit; });
  add("requests.rejected.queue_full", "requests", "rejected by the class's queue limit", 0,
      count_row("rejected: queue full"), [](const ClassMetrics& m) { return m.rejected_queue_full; });
  add("requests.rejected.context", "requests", "rejected: the context exceeds the KV share", 0,
      count_row("rejected: context"), [](const ClassMetrics& m) { return m.rejected_context; });
  add("requests.unfinished", "requests",
      "queued, paused or running when the clock stopped; offered = completed + rejected + unfinished, always", 0,
      count_row("requests unfinished"), [](const ClassMetrics& m) { return m.unfinished; });

  // The client's latencies, each summarised over the completed requests; null without one.
  struct Latency {
    const char* path;
    const char* label;
    const char* meaning;
    Distribution ClassMetrics::*field;
  };
  const std::array<Latency, 4> latencies = {
      {{"ttft_ms", "time to first token",
        "time to first token: client send to first token at the client (transport included)", &ClassMetrics::ttft_ms},
       {"tpot_ms", "time per output token",
        "time per output token after the first: (last - first token at the client) / (tokens - 1), requests of 2+ "
        "tokens",
        &ClassMetrics::tpot_ms},
       {"e2e_ms", "end to end", "client send to last token at the client", &ClassMetrics::e2e_ms},
       {"queue_ms", "queueing", "arrival at the server to admission into the batch", &ClassMetrics::queue_ms}}};
  struct Statistic {
    const char* name;
    double Distribution::*field;
  };
  const std::array<Statistic, 5> statistics = {{{"mean", &Distribution::mean},
                                                {"p50", &Distribution::p50},
                                                {"p90", &Distribution::p90},
                                                {"p99", &Distribution::p99},
                                                {"max", &Distribution::max}}};
  for (const Latency& latency : latencies)
    for (const Statistic& statistic : statistics) {
      const std::string path = std::string(latency.path) + "." + statistic.name;
      const bool sweep_default = path == "ttft_ms.p50" || path == "ttft_ms.p99" || path == "tpot_ms.p50";
      add(path, "ms", std::string(statistic.name) + " of the " + latency.meaning,
          sweep_default ? unsigned(kSweepDefault) : 0u,
          TableRow{std::string(latency.label) + ", " + statistic.name, "ms", 1, 3},
          [distribution = latency.field, field = statistic.field](const ClassMetrics& m) -> nlohmann::json {
            const Distribution& d = m.*distribution;
            if (d.count == 0) return nullptr;
            return d.*field;
          });
    }

  add("output_tokens", "tokens", "output tokens generated, finished requests or not", 0, std::nullopt,
      [](const ClassMetrics& m) { return m.output_tokens; });
  add("tokens_per_second", "tokens/s", "output tokens over the run", kSweepDefault,
      TableRow{"throughput", "tokens/s", 1, 1}, [](const ClassMetrics& m) { return m.tokens_per_second; });
  auto per_user = [](double Distribution::*field) {
    return [field](const ClassMetrics& m) -> nlohmann::json {
      if (m.tokens_per_second_per_user.count == 0) return nullptr;
      return m.tokens_per_second_per_user.*field;
    };
  };
  add("tokens_per_second_per_user.mean", "tokens/s", "mean over the completed requests of 2+ tokens of 1 / TPOT", 0,
      TableRow{"throughput per user, mean", "tokens/s", 1, 3}, per_user(&Distribution::mean));
  add("tokens_per_second_per_user.p50", "tokens/s", "median of the same", 0, std::nullopt,
      per_user(&Distribution::p50));
  add("goodput_rps", "requests/s", "completed requests within their class's SLOs, over the run", 0,
      TableRow{"goodput", "requests/s", 1, 3}, [](const ClassMetrics& m) { return m.goodput_rps; });
  add("preemptions", "requests", "times a request was paused for one of a higher class", 0, count_row("preemptions"),
      [](const ClassMetrics& m) { return m.preemptions; });
  return table;
}

std::vector<RunFigure> build_run_table() {
  std::vector<RunFigure> table;
  auto add = [&table](std::string path, std::string unit, std::string description, unsigned flags,
                      std::function<nlohmann::json(const ServeResult&)> read) {
    table.push_back({std::move(path), std::move(unit), std::move(description), flags, std::move(read)});
  };
  add("fits", "", "true; a plan that does not fit writes {fits: false, error, config_hash, version} and exits 3",
      kSetup, [](const ServeResult&) { return true; });
  add("experiment.model", "", "model name, with the parameters that differ from its preset", kSetup,
      [](const ServeResult& r) { return r.outcome.model_label; });
  add("experiment.hardware", "", "hardware preset name, with the parameters that differ from the preset", kSetup,
      [](const ServeResult& r) { return r.outcome.hardware_label; });
  add("experiment.wafers", "wafers", "wafers the plan uses", kSetup,
      [](const ServeResult& r) { return r.outcome.wafers; });
  add("experiment.requests", "", "where the requests come from: the synthetic streams or serving.trace_file", kSetup,
      [](const ServeResult& r) { return r.outcome.origin; });
  add("experiment.max_batch", "sequences", "serving.scheduler.max_batch", kSetup,
      [](const ServeResult& r) { return r.outcome.spec.max_batch; });
  add("experiment.policy", "", "serving.scheduler.policy", kSetup,
      [](const ServeResult& r) { return policy_name(r.outcome.spec.policy); });
  add("experiment.preemption", "", "serving.scheduler.preemption", kSetup,
      [](const ServeResult& r) { return r.outcome.spec.preemption; });
  add("experiment.transport", "", "serving.transport.kind", kSetup,
      [](const ServeResult& r) { return transport_name(r.outcome.spec.transport.kind); });

  add("serving.step_times.origin", "",
      "where the step times come from: closed form, or engine / analytic when scaled to measured cycles", kSetup,
      [](const ServeResult& r) { return r.outcome.step_times_origin; });
  add("serving.step_times.file", "", "the run's --json document they were measured in (--step-times); null without",
      kSetup, [](const ServeResult& r) -> nlohmann::json {
        if (r.outcome.step_times_file.empty()) return nullptr;
        return r.outcome.step_times_file;
      });
  add("serving.step_times.samples", "contexts", "contexts the closed form is evaluated at and interpolated between", 0,
      [](const ServeResult& r) { return r.outcome.interpolation_samples; });
  add("serving.step_times.interpolation_error_max", "fraction",
      "largest relative difference between the interpolation and the closed form at the midpoints", 0,
      [](const ServeResult& r) { return r.outcome.interpolation_error; });
  add("serving.step_times.prefill_chunk_tokens", "tokens", "tokens of a prefill chunk", kSetup,
      [](const ServeResult& r) { return r.outcome.chunk_tokens; });
  add("serving.utilization", "fraction", "busy time of the busiest region root over the run (pipeline occupancy)", 0,
      [](const ServeResult& r) { return r.outcome.metrics.utilization; });
  add("serving.duration_s", "s", "the run: to the last token leaving the pipeline, or serving.duration_s", 0,
      [](const ServeResult& r) { return r.outcome.metrics.duration_s; });
  add("serving.kv_capacity_tokens", "tokens", "the KV share (the plan's max_context_tokens)", 0,
      [](const ServeResult& r) { return r.outcome.run.kv_capacity_tokens; });
  add("serving.evictions", "sessions", "session caches dropped to make room", 0,
      [](const ServeResult& r) { return r.outcome.run.counters.evictions; });
  add("serving.reused_prefix_tokens", "tokens", "prompt positions not prefilled again thanks to a cached session", 0,
      [](const ServeResult& r) { return r.outcome.run.counters.reused_prefix_tokens; });
  add("serving.prefill_chunks", "items", "prefill chunks passed through the pipeline", 0,
      [](const ServeResult& r) { return r.outcome.run.counters.prefill_chunks; });
  add("serving.decode_tokens", "items", "decode tokens passed through the pipeline", 0,
      [](const ServeResult& r) { return r.outcome.run.counters.decode_tokens; });

  add("serving.speculative.draft_model", "", "the draft model (workload.speculative.draft_model)",
      kSetup | kSpeculative, [](const ServeResult& r) { return r.outcome.draft_model; });
  add("serving.speculative.draft_tokens", "tokens", "k: draft tokens proposed per step", kSetup | kSpeculative,
      [](const ServeResult& r) { return r.outcome.draft_tokens; });
  add("serving.speculative.target_rows", "rows", "rows of every wafer that hold the target", kSetup | kSpeculative,
      [](const ServeResult& r) { return r.outcome.target_rows; });
  add("serving.speculative.draft_rows", "rows", "rows of wafer 0 that hold the draft", kSetup | kSpeculative,
      [](const ServeResult& r) { return r.outcome.draft_rows; });
  add("serving.speculative.decode_steps", "steps", "speculative steps (decode items) of every request", kSpeculative,
      [](const ServeResult& r) { return r.outcome.run.counters.decode_steps; });
  add("serving.speculative.tokens_per_step", "tokens", "decode_tokens over decode_steps", kSpeculative,
      [](const ServeResult& r) { return tokens_per_step(r.outcome.run.counters); });

  add("config_hash", "", "hash of the resolved configuration", kSetup,
      [](const ServeResult& r) { return r.experiment.config.hash(); });
  add("version", "", "the wafersim version", kSetup, [](const ServeResult&) { return version(); });
  add("config", "", "the resolved configuration: every parameter by section, as wafersim validate --print shows it",
      kSetup, [](const ServeResult& r) { return config_json(r.experiment.config); });
  return table;
}

void write_class(const ClassMetrics& metrics, nlohmann::json& document) {
  for (const ClassFigure& figure : serving_class_table()) document[pointer(figure.path)] = figure.read(metrics);
}

}  // namespace

const std::vector<ClassFigure>& serving_class_table() {
  static const std::vector<ClassFigure> table = build_class_table();
  return table;
}

const std::vector<RunFigure>& serving_run_table() {
  static const std::vector<RunFigure> table = build_run_table();
  return table;
}

std::vector<std::string> serving_sweep_defaults() {
  std::vector<std::string> paths;
  for (const ClassFigure& figure : serving_class_table())
    if (figure.flags & kSweepDefault) paths.push_back("serving." + figure.path);
  return paths;
}

void write_serving_figures(const ServeResult& result, nlohmann::json& document) {
  const serving::ServingMetrics& metrics = result.outcome.metrics;
  write_class(metrics.overall, document["serving"]);
  for (size_t c = 0; c < workloads::kRequestClasses; ++c)
    write_class(metrics.classes[c], document["serving"]["classes"][workloads::class_names()[c]]);
  const bool speculative = !result.outcome.draft_model.empty();
  for (const RunFigure& figure : serving_run_table())
    if (speculative || !(figure.flags & kSpeculative)) document[pointer(figure.path)] = figure.read(result);
}

std::vector<std::vector<std::string>> serving_rows(const std::vector<const serving::ClassMetrics*>& columns) {
  std::vector<std::vector<std::string>> rows;
  for (const ClassFigure& figure : serving_class_table()) {
    if (!figure.row) continue;
    std::vector<std::string> cells = {figure.row->label};
    for (const ClassMetrics* metrics : columns) cells.push_back(table_cell(*figure.row, figure.read(*metrics)));
    cells.push_back(figure.row->unit);
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace wafersim::reports
