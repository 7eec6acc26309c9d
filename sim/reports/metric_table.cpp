#include "sim/reports/metric_table.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "models/tile_program.h"
#include "models/wafer_repairs.h"
#include "sim/experiment/version.h"
#include "sim/reports/config_json.h"

namespace wafersim::reports {

namespace {

using Read = std::function<nlohmann::json(const DecodeResult&)>;

double sram_fraction(const DecodeResult& r, uint64_t bytes) {
  return double(bytes) / double(r.plan.hw.tile.sram_bytes);
}

// The energy figures of a phase (metrics.energy, metrics.prefill.energy), declared once for both.
void add_energy_metrics(
    const std::function<void(std::string, std::string, std::string, unsigned, std::optional<TableRow>, Read)>& add,
    const std::string& prefix, const std::string& phase, const std::string& per, unsigned flags,
    const std::function<const EnergyMetrics*(const DecodeResult&)>& of) {
  auto read = [of](auto field) {
    return [of, field](const DecodeResult& r) -> nlohmann::json {
      const EnergyMetrics* e = of(r);
      if (!e) return nullptr;
      return field(*e);
    };
  };
  const bool decode = phase == "decode";
  add(prefix + "joules_per_token", "J", "energy of the " + phase + " over " + per + " (docs/ENERGY.md)",
      flags | kGolden | (decode ? kSweepDefault : 0u),
      TableRow{phase + (decode ? " energy per token" : " energy per prompt token"), "J", 1, 6},
      read([](const EnergyMetrics& e) { return e.joules_per_token; }));
  add(prefix + "average_power_watts", "W", "energy of the " + phase + " over its time",
      flags | (decode ? kSweepDefault : 0u), TableRow{phase + " average power", "kW", 1e-3, 3},
      read([](const EnergyMetrics& e) { return e.average_power_watts; }));
  add(prefix + "peak_power_watts", "W",
      "the highest mean power over windows of hardware.energy.peak_window_cycles (each region's events of an "
      "iteration spread over its span); the average when the " +
          phase + " is shorter than a window",
      flags | (decode ? kSweepDefault : 0u), TableRow{phase + " peak power", "kW", 1e-3, 3},
      read([](const EnergyMetrics& e) { return e.peak_power_watts; }));
  add(prefix + "rated_power_watts", "W",
      "the systems' published power rating (hardware.energy.rated_power_watts times the wafers); 0: none published",
      flags, decode ? std::optional<TableRow>{TableRow{"rated power", "kW", 1e-3, 3}} : std::nullopt,
      read([](const EnergyMetrics& e) { return e.rated_power_watts; }));
  add(prefix + "exceeds_rated_power", "",
      "true when peak_power_watts passes a published rated_power_watts (the command also warns on stderr)", flags,
      std::nullopt, read([](const EnergyMetrics& e) { return e.exceeds_rating(); }));
  add(prefix + "total_joules", "J", "energy of the whole " + phase + ": the breakdown's sum", flags | kGolden,
      std::nullopt, read([](const EnergyMetrics& e) { return e.joules.total(); }));
  const std::vector<std::tuple<std::string, std::string, double EnergyJoules::*>> parts = {
      {"compute", "multiply-adds, by arithmetic width (hardware.energy.fmac_pj_*)", &EnergyJoules::compute},
      {"sram", "SRAM bytes read and written by the tasks", &EnergyJoules::sram},
      {"fabric", "bytes times the mesh links they crossed", &EnergyJoules::fabric},
      {"offwafer", "bytes between wafers", &EnergyJoules::offwafer}};
  for (const auto& [part, meaning, field] : parts)
    add(prefix + "breakdown." + part, "J", "energy of the " + phase + "'s " + meaning, flags | kGolden,
        decode ? std::optional<TableRow>{TableRow{"energy: " + part, "J", 1, 6}} : std::nullopt,
        read([field = field](const EnergyMetrics& e) { return e.joules.*field; }));
  add(prefix + "breakdown.static", "J",
      "leakage and clock of every tile of every wafer over the " + phase +
          "'s time, and each wafer's system's "
          "fixed power (system_fixed_joules)",
      flags | kGolden, decode ? std::optional<TableRow>{TableRow{"energy: static", "J", 1, 6}} : std::nullopt,
      read([](const EnergyMetrics& e) { return e.joules.static_total(); }));
  add(prefix + "system_fixed_joules", "J", "of breakdown.static, the systems' fixed power (cooling)", flags,
      std::nullopt, read([](const EnergyMetrics& e) { return e.joules.system_fixed; }));
  const std::vector<std::tuple<std::string, std::string, uint64_t EventCounts::*>> events = {
      {"flops_32bit", "flops", &EventCounts::flops_32bit},
      {"flops_16bit", "flops", &EventCounts::flops_16bit},
      {"flops_8bit", "flops", &EventCounts::flops_8bit},
      {"sram_read_bytes", "bytes", &EventCounts::sram_read_bytes},
      {"sram_write_bytes", "bytes", &EventCounts::sram_write_bytes},
      {"link_byte_hops", "byte hops", &EventCounts::link_byte_hops},
      {"offwafer_bytes", "bytes", &EventCounts::offwafer_bytes}};
  for (const auto& [name, unit, field] : events)
    add(prefix + "events." + name, unit,
        "the " + phase + "'s events the energy counts, from the plan's programs (the same for every backend)",
        flags | kGolden, std::nullopt, read([field = field](const EnergyMetrics& e) { return e.events.*field; }));
}

// The repaired wafers' figures (docs/DEFECTS.md); no key on perfect wafers.
void add_defect_metrics(
    const std::function<void(std::string, std::string, std::string, unsigned, std::optional<TableRow>, Read)>& add) {
  auto repair = [](auto field) {
    return [field](const DecodeResult& r) -> nlohmann::json {
      if (!r.plan.hw.repairs) return nullptr;
      return field(r.plan.hw.repairs->summary(r.plan.hw.wafers));
    };
  };
  add("metrics.defects.dead_tiles", "tiles",
      "dead tiles of the wafers' physical grids (the logical grid and spares), over the run's wafers",
      kSetup | kDefects, TableRow{"defects: dead tiles", "over the wafers", 1, 0},
      repair([](const RepairSummary& s) { return s.dead_tiles; }));
  add("metrics.defects.dead_links", "links", "dead mesh links of the wafers' physical grids, over the run's wafers",
      kSetup | kDefects, TableRow{"defects: dead links", "over the wafers", 1, 0},
      repair([](const RepairSummary& s) { return s.dead_links; }));
  add("metrics.defects.spares_used", "lines",
      "spare rows and columns the repair used, the most any wafer used: spare_rows_used + spare_columns_used",
      kSetup | kDefects, TableRow{"defects: spare lines used", "most on a wafer", 1, 0},
      repair([](const RepairSummary& s) { return s.spare_rows_used + s.spare_columns_used; }));
  add("metrics.defects.spare_rows_used", "rows", "of spares_used, rows", kSetup | kDefects, std::nullopt,
      repair([](const RepairSummary& s) { return s.spare_rows_used; }));
  add("metrics.defects.spare_columns_used", "columns",
      "of spares_used, columns (shift scheme: the most spare columns a shifted row reaches into)", kSetup | kDefects,
      std::nullopt, repair([](const RepairSummary& s) { return s.spare_columns_used; }));
  add("metrics.defects.logical_grid", "tiles", "the grid programs see after repair, columns x rows", kSetup | kDefects,
      std::nullopt, [](const DecodeResult& r) -> nlohmann::json {
        if (!r.plan.hw.repairs) return nullptr;
        return std::to_string(r.plan.hw.grid_width) + " x " + std::to_string(r.plan.hw.grid_height);
      });
  add("metrics.defects.extra_hops_mean", "hops",
      "extra physical hops per logical link around what the repair skipped, mean over every wafer's logical links",
      kSetup | kDefects, TableRow{"defects: extra hops per link", "hops", 1, 4},
      repair([](const RepairSummary& s) { return s.extra_hops_mean; }));
  auto slowdown = [](auto field) {
    return [field](const DecodeResult& r) -> nlohmann::json {
      if (!r.metrics.defects) return nullptr;
      return field(*r.metrics.defects);
    };
  };
  add("metrics.defects.perfect_wafer_total_cycles", "cycles",
      "total_cycles of the same experiment on a perfect wafer, closed form", kDefects, std::nullopt,
      slowdown([](const DefectSlowdown& d) { return d.perfect_wafer_cycles; }));
  add("metrics.defects.slowdown", "", "the closed form's total_cycles on this wafer over perfect_wafer_total_cycles",
      kDefects, TableRow{"defects: slowdown (closed form)", "x", 1, 4},
      slowdown([](const DefectSlowdown& d) { return d.slowdown(); }));
  add("metrics.defects.route_extra_hops_max", "hops",
      "extra hops charged to the longest route (hardware.defects.detour_charge, docs/DEFECTS.md)", kSetup | kDefects,
      std::nullopt, repair([](const RepairSummary& s) { return s.route_extra_hops_max; }));
}

std::vector<Metric> build_table() {
  std::vector<Metric> table;
  auto add = [&table](std::string path, std::string unit, std::string description, unsigned flags,
                      std::optional<TableRow> row, Read read) {
    table.push_back({std::move(path), std::move(unit), std::move(description), flags, std::move(row), std::move(read)});
  };

  // What was run: the result's header, so a sweep can tabulate it like any figure.
  add("fits", "", "true; a plan that does not fit writes {fits: false, error, config_hash, version} and exits 3",
      kSetup, std::nullopt, [](const DecodeResult&) { return true; });
  add("engine", "", "the backend that produced the result: sim or analytic", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.figures.backend; });
  add("experiment.model", "", "model name, with the parameters that differ from its preset", kSetup, std::nullopt,
      [](const DecodeResult& r) { return section_label(r.experiment.config, "model", r.plan.model.name); });
  add("experiment.hardware", "", "hardware preset name, with the parameters that differ from the preset", kSetup,
      std::nullopt,
      [](const DecodeResult& r) { return section_label(r.experiment.config, "hardware", r.plan.hw.name); });
  add("experiment.wafers", "wafers", "wafers the plan uses", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.plan.hw.wafers; });
  add("experiment.kv_head_copies", "copies",
      "copies of each KV head's cache the plan keeps (mapping.kv_head_copies, resolved; 1 with grid attention or the "
      "root dataflow)",
      kSetup, std::nullopt, [](const DecodeResult& r) { return r.plan.options.kv_head_copies; });
  add("experiment.batch", "sequences", "sequences decoded together", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.plan.workload.batch; });
  add("experiment.prompt_tokens", "tokens", "the longest prompt (workload.prompt_tokens may give one per sequence)",
      kSetup, std::nullopt, [](const DecodeResult& r) { return r.plan.workload.prompt_tokens; });
  add("experiment.decode_tokens", "tokens", "tokens decoded per sequence", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.plan.workload.decode_tokens; });
  add("experiment.contention", "", "whether the engine modelled link contention", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.experiment.sim.contention; });
  add("experiment.clock_ghz", "GHz", "clock that converts cycles to time", kSetup, std::nullopt,
      [](const DecodeResult& r) { return r.plan.hw.clock_ghz; });
  add("config_hash", "", "hash of the resolved configuration (wafersim validate --print shows it)", kSetup,
      std::nullopt, [](const DecodeResult& r) { return r.experiment.config.hash(); });
  add("version", "", "wafersim version", kSetup, std::nullopt, [](const DecodeResult&) { return version(); });
  add("config", "", "the resolved configuration: every parameter by section, as wafersim validate --print shows it",
      kSetup, std::nullopt, [](const DecodeResult& r) { return config_json(r.experiment.config); });

  add("metrics.tokens_per_second", "tokens/s", "tokens / (total_cycles / clock), all sequences", kSweepDefault,
      TableRow{"throughput", "tokens/s (all sequences)", 1, 1},
      [](const DecodeResult& r) { return r.metrics.tokens_per_second; });
  add("metrics.tokens_per_second_per_user", "tokens/s", "tokens_per_second divided by the batch", kSweepDefault,
      TableRow{"throughput per user", "tokens/s", 1, 1},
      [](const DecodeResult& r) { return r.metrics.tokens_per_second_per_user; });
  const std::vector<std::pair<std::string, double LatencySummary::*>> latency = {{"mean", &LatencySummary::mean},
                                                                                 {"p50", &LatencySummary::p50},
                                                                                 {"p99", &LatencySummary::p99},
                                                                                 {"max", &LatencySummary::max}};
  for (const auto& [statistic, field] : latency)
    add("metrics.per_token_latency_us." + statistic, "us",
        statistic +
            " per-token latency: from the sequence's previous token (or the start) to this one leaving "
            "the LM head" +
            (statistic[0] == 'p' ? ", nearest rank" : ""),
        statistic == "mean" || statistic == "p99" ? kSweepDefault : 0u,
        TableRow{"per-token latency, " + statistic, "us", 1, 3},
        [field = field](const DecodeResult& r) { return r.metrics.per_token_latency_us.*field; });
  add("metrics.cycles_per_token", "cycles", "mean per-token latency, in cycles", kGolden | kSweepDefault,
      TableRow{"cycles per token", "cycles", 1, 0}, [](const DecodeResult& r) { return r.metrics.cycles_per_token; });
  add("metrics.total_cycles", "cycles", "cycle at which the last token left the LM head", kGolden,
      TableRow{"total", "cycles", 1, 0}, [](const DecodeResult& r) { return r.metrics.total_cycles; });
  add("metrics.tokens", "tokens", "tokens generated: batch x decode_tokens", 0, std::nullopt,
      [](const DecodeResult& r) { return r.metrics.tokens; });
  for (size_t c = 0; c < size_t(Category::kCount); ++c) {
    const std::string category = category_name(Category(c));
    add("metrics.breakdown." + category, "fraction", "share of the critical path spent in " + category, kGolden,
        TableRow{"critical path: " + category, "%", 100, 1},
        [c](const DecodeResult& r) { return r.metrics.breakdown[c]; });
  }
  add("metrics.per_layer", "cycles",
      "per region: {region, cycles_per_token}, the mean over iterations of finish - start", kGolden, std::nullopt,
      [](const DecodeResult& r) {
        nlohmann::json layers = nlohmann::json::array();
        for (const LayerCycles& layer : r.metrics.per_layer)
          layers.push_back({{"region", layer.name}, {"cycles_per_token", layer.cycles_per_token}});
        return layers;
      });
  add("metrics.steps", "cycles",
      "per region kind: [{step, cycles}], each step of the first token in closed form (analytic only)", 0, std::nullopt,
      [](const DecodeResult& r) {
        nlohmann::json steps;  // null, and so left out, when the backend offers none
        for (const backend::StepCycles& step : r.figures.first_token_steps)
          steps[step.region].push_back({{"step", step.step}, {"cycles", step.cycles}});
        return steps;
      });

  add("metrics.per_token", "us",
      "latency of every iteration in order (iteration n: token n / batch of sequence n % batch), the values "
      "per_token_latency_us summarises",
      0, std::nullopt, [](const DecodeResult& r) { return r.metrics.token_latencies_us; });
  add("metrics.steps_per_region", "cycles",
      "every region's steps of the first token in closed form: [{region, step, cycles}] (analytic only)", 0,
      std::nullopt, [](const DecodeResult& r) {
        nlohmann::json steps;  // null, and so left out, when the backend offers none
        for (const backend::StepCycles& step : r.figures.region_steps)
          steps.push_back({{"region", step.region}, {"step", step.step}, {"cycles", step.cycles}});
        return steps;
      });

  // The prefill's figures: left out (and "—" in the table) when it was not timed.
  auto prefill = [](auto field) {
    return [field](const DecodeResult& r) -> nlohmann::json {
      if (!r.metrics.prefill) return nullptr;
      return field(*r.metrics.prefill);
    };
  };
  add("metrics.time_to_first_token_us.mean", "us",
      "mean over sequences of the time to first token: the prefill of the whole batch, then the sequence's first "
      "decoded token leaving the LM head",
      kSweepDefault, TableRow{"time to first token, mean", "us", 1, 3},
      prefill([](const PrefillMetrics& p) { return p.time_to_first_token_us.mean; }));
  for (const auto& [statistic, field] : latency)
    if (statistic != "mean")
      add("metrics.time_to_first_token_us." + statistic, "us", statistic + " of the time to first token over sequences",
          statistic == "p99" ? kSweepDefault : 0u,
          statistic == "max" ? std::optional<TableRow>{TableRow{"time to first token, max", "us", 1, 3}} : std::nullopt,
          prefill([field = field](const PrefillMetrics& p) { return p.time_to_first_token_us.*field; }));
  add("metrics.prefill.cycles", "cycles", "cycle at which the last prompt chunk left the last layer", kGolden,
      TableRow{"prefill", "cycles", 1, 0}, prefill([](const PrefillMetrics& p) { return p.cycles; }));
  add("metrics.prefill.seconds", "s", "prefill.cycles / clock", 0, std::nullopt,
      prefill([](const PrefillMetrics& p) { return p.seconds; }));
  add("metrics.prefill.tokens_per_second", "tokens/s", "prompt tokens of every sequence over prefill.seconds",
      kSweepDefault, TableRow{"prefill throughput", "tokens/s", 1, 1},
      prefill([](const PrefillMetrics& p) { return p.tokens_per_second; }));
  add("metrics.prefill.chunk_tokens", "tokens",
      "tokens per prefill chunk (workload.prefill_chunk_tokens, or fewer by mapping.prefill_chunk)", kSetup,
      TableRow{"prefill chunk", "tokens", 1, 0}, prefill([](const PrefillMetrics& p) { return p.chunk_tokens; }));
  add("metrics.prefill.sram_peak_bytes", "bytes",
      "the fullest tile's SRAM with the prefill chunk's buffers; over hardware.tile.sram_bytes when the chunk does "
      "not fit (mapping.prefill_chunk: as_asked; `wafersim map` names the largest that would)",
      kSetup, TableRow{"prefill SRAM per tile, peak", "bytes", 1, 0},
      prefill([](const PrefillMetrics& p) { return p.sram_peak_bytes; }));
  add("metrics.prefill.chunks", "chunks", "chunks of every sequence's prompt together", kSetup, std::nullopt,
      prefill([](const PrefillMetrics& p) { return p.chunks; }));
  add("metrics.prefill.padded_tokens", "tokens",
      "tokens the last chunk of each prompt was padded with, over every sequence (chunks x chunk_tokens - the "
      "prompts' tokens)",
      kSetup, std::nullopt, prefill([](const PrefillMetrics& p) { return p.padded_tokens; }));
  for (size_t c = 0; c < size_t(Category::kCount); ++c) {
    const std::string category = category_name(Category(c));
    add("metrics.prefill.breakdown." + category, "fraction",
        "share of the prefill's critical path spent in " + category, 0, std::nullopt,
        prefill([c](const PrefillMetrics& p) { return p.breakdown[c]; }));
  }
  add("metrics.prefill.per_layer", "cycles",
      "per region of the prefill (no LM head): {region, cycles_per_chunk}, the mean over chunks of finish - start", 0,
      std::nullopt, prefill([](const PrefillMetrics& p) {
        nlohmann::json layers = nlohmann::json::array();
        for (const LayerCycles& layer : p.per_layer)
          layers.push_back({{"region", layer.name}, {"cycles_per_chunk", layer.cycles_per_token}});
        return layers;
      }));
  add("metrics.prefill.steps_per_region", "cycles",
      "every prefill region's steps of the first chunk in closed form, whichever backend timed the prefill: "
      "[{region, step, cycles}]",
      0, std::nullopt, prefill([](const PrefillMetrics& p) {
        nlohmann::json steps = nlohmann::json::array();
        for (const StepCycles& step : p.steps)
          steps.push_back({{"region", step.region}, {"step", step.step}, {"cycles", step.cycles}});
        return steps;
      }));
  add("metrics.end_to_end_tokens_per_second", "tokens/s",
      "decoded tokens over prefill + decode time (decode starts when the prefill has ended)", kSweepDefault,
      TableRow{"end-to-end throughput", "tokens/s", 1, 1},
      prefill([](const PrefillMetrics& p) { return p.end_to_end_tokens_per_second; }));

  add_energy_metrics(add, "metrics.prefill.energy.", "prefill", "every sequence's prompt tokens", 0,
                     [](const DecodeResult& r) -> const EnergyMetrics* {
                       return r.metrics.prefill ? &r.metrics.prefill->energy : nullptr;
                     });

  // Speculative decoding's figures: left out (no row, no key) when the workload decodes plainly.
  auto speculative = [](auto field) {
    return [field](const DecodeResult& r) -> nlohmann::json {
      if (!r.metrics.speculative) return nullptr;
      return field(*r.metrics.speculative);
    };
  };
  using S = SpeculativeMetrics;
  add("metrics.speculative.draft_model", "", "the draft model (workload.speculative.draft_model)",
      kSetup | kSpeculative, std::nullopt, speculative([](const S& s) { return s.draft_model; }));
  add("metrics.speculative.draft_tokens", "tokens", "k: draft tokens proposed per step", kSetup | kSpeculative,
      std::nullopt, speculative([](const S& s) { return s.draft_tokens; }));
  add("metrics.speculative.acceptance", "", "fixed or sampled", kSetup | kSpeculative, std::nullopt,
      speculative([](const S& s) { return s.acceptance; }));
  add("metrics.speculative.acceptance_rate", "fraction",
      "a: probability that a draft token is accepted, given that those before it were", kSetup | kSpeculative,
      std::nullopt, speculative([](const S& s) { return s.acceptance_rate; }));
  add("metrics.speculative.verify", "",
      "pipelined (the k + 1 positions one after another through the target's layer pipeline) or chunk (together "
      "through each step)",
      kSetup | kSpeculative, std::nullopt, speculative([](const S& s) { return s.verify; }));
  add("metrics.speculative.target_rows", "rows", "rows 0 .. target_rows - 1 of every wafer hold the target",
      kSetup | kSpeculative, std::nullopt, speculative([](const S& s) { return s.target_rows; }));
  add("metrics.speculative.draft_rows", "rows", "the last draft_rows rows of wafer 0 hold the draft",
      kSetup | kSpeculative, std::nullopt, speculative([](const S& s) { return s.draft_rows; }));
  add("metrics.speculative.draft_tiles", "tiles", "tiles the draft's plan uses", kSetup | kSpeculative, std::nullopt,
      speculative([](const S& s) { return s.draft_tiles; }));
  add("metrics.speculative.steps", "steps", "speculative steps of the batch until every sequence has its tokens",
      kSpeculative, std::nullopt, speculative([](const S& s) { return s.steps; }));
  add("metrics.speculative.tokens_per_step", "tokens",
      "tokens a step emits per sequence, accepted drafts + 1: fixed, the closed form; sampled, the mean of the draws",
      kSpeculative, TableRow{"speculative: tokens per step", "tokens", 1, 3},
      speculative([](const S& s) { return s.tokens_per_step; }));
  add("metrics.speculative.expected_tokens_per_step", "tokens", "the closed form (1 - a^(k+1)) / (1 - a)", kSpeculative,
      std::nullopt, speculative([](const S& s) { return s.expected_tokens_per_step; }));
  add("metrics.speculative.effective_tokens_per_second_per_user", "tokens/s",
      "tokens_per_step over the step time (cycles_per_step / clock)", kSpeculative,
      TableRow{"speculative: effective per user", "tokens/s", 1, 1},
      speculative([](const S& s) { return s.effective_tokens_per_second_per_user; }));
  add("metrics.speculative.cycles_per_step", "cycles", "draft_cycles_per_step + verify_cycles_per_step", kSpeculative,
      TableRow{"speculative: step", "cycles", 1, 0}, speculative([](const S& s) { return s.cycles_per_step; }));
  add("metrics.speculative.draft_cycles_per_step", "cycles", "the draft's k tokens of every sequence of the batch",
      kSpeculative, TableRow{"speculative: draft", "cycles", 1, 0},
      speculative([](const S& s) { return s.draft_cycles_per_step; }));
  add("metrics.speculative.verify_cycles_per_step", "cycles",
      "the target's pass over k + 1 positions of every sequence of the batch", kSpeculative,
      TableRow{"speculative: verify", "cycles", 1, 0},
      speculative([](const S& s) { return s.verify_cycles_per_step; }));
  add("metrics.speculative.draft_fraction", "fraction", "draft_cycles_per_step over cycles_per_step", kSpeculative,
      TableRow{"speculative: draft share", "%", 100, 1}, speculative([](const S& s) { return s.draft_fraction; }));

  // How the seeded router loads an MoE model's experts: left out for a dense model.
  auto moe = [](auto field) {
    return [field](const DecodeResult& r) -> nlohmann::json {
      if (!r.metrics.moe) return nullptr;
      return field(*r.metrics.moe);
    };
  };
  using Load = workloads::ExpertLoad;
  add("metrics.moe.expert_load_max", "tokens",
      "the busiest routed expert's tokens of a decode step (one per sequence of the batch), mean over MoE layers and "
      "steps",
      kMoe, TableRow{"MoE: busiest expert", "tokens per step", 1, 2}, moe([](const Load& l) { return l.max_tokens; }));
  add("metrics.moe.expert_load_mean", "tokens",
      "tokens of a decode step per routed expert that takes any (batch x top_k over the experts taking one), mean over "
      "MoE layers and steps",
      kMoe, TableRow{"MoE: tokens per busy expert", "tokens per step", 1, 2},
      moe([](const Load& l) { return l.mean_tokens; }));
  add("metrics.moe.idle_expert_fraction", "fraction",
      "routed experts that take no token of a decode step, over the routed experts, mean over MoE layers and steps",
      kMoe, TableRow{"MoE: idle experts", "%", 100, 1}, moe([](const Load& l) { return l.idle_fraction; }));

  add_defect_metrics(add);

  add_energy_metrics(add, "metrics.energy.", "decode", "the tokens generated", 0,
                     [](const DecodeResult& r) { return &r.metrics.energy; });

  add("utilization.compute.mean", "fraction", "fraction of the run a tile computes, mean over tiles with a program",
      kMeasuredOnly, TableRow{"compute utilisation, mean", "%", 100, 2},
      [](const DecodeResult& r) { return r.figures.compute_busy_mean; });
  add("utilization.compute.peak", "fraction", "the same for the busiest tile", kMeasuredOnly, std::nullopt,
      [](const DecodeResult& r) { return r.figures.compute_busy_peak; });
  add("utilization.sram_capacity.mean", "fraction", "SRAM in use over capacity, mean over used tiles (from the plan)",
      0, TableRow{"SRAM capacity used, mean", "%", 100, 1},
      [](const DecodeResult& r) { return sram_fraction(r, r.plan.sram_mean_bytes); });
  add("utilization.sram_capacity.peak", "fraction", "the same for the fullest tile", 0, std::nullopt,
      [](const DecodeResult& r) { return sram_fraction(r, r.plan.sram_peak_bytes); });
  add("utilization.links.mean", "fraction",
      "fraction of the run a directed link is busy, mean over all links (engine with contention on)", kMeasuredOnly,
      std::nullopt, [](const DecodeResult& r) { return r.figures.link_busy_mean; });
  add("utilization.links.peak", "fraction", "the same for the busiest link", kMeasuredOnly, std::nullopt,
      [](const DecodeResult& r) { return r.figures.link_busy_peak; });

  add("sim.tiles_simulated", "tiles", "tiles that exist in the simulation (all tiles of all wafers)", kMeasuredOnly,
      TableRow{"tiles simulated", "tiles", 1, 0}, [](const DecodeResult& r) { return r.figures.tiles_simulated; });
  add("sim.events", "events", "tasks processed plus message deliveries", kMeasuredOnly,
      TableRow{"events", "events", 1, 0}, [](const DecodeResult& r) { return r.figures.events; });
  add("sim.link_hops", "hops", "link traversals of every message", kMeasuredOnly, std::nullopt,
      [](const DecodeResult& r) { return r.figures.link_hops; });
  add("sim.events_per_second", "events/s", "simulation speed of this run", kMeasuredOnly | kMachineDependent,
      std::nullopt, [](const DecodeResult& r) {
        return r.figures.wall_seconds > 0 ? double(r.figures.events) / r.figures.wall_seconds : 0.0;
      });
  add("sim.wall_seconds", "s", "wall time of the whole command, loading and compiling included", kMachineDependent,
      TableRow{"wall time", "s", 1, 2}, [](const DecodeResult& r) { return r.figures.wall_seconds; });
  add("sim.wall_seconds_per_token", "s", "wall_seconds (the prefill's included) over the tokens decoded",
      kMachineDependent, TableRow{"wall time per token", "s", 1, 3},
      [](const DecodeResult& r) { return r.figures.wall_seconds / double(std::max<uint64_t>(r.metrics.tokens, 1)); });
  add("sim.peak_rss_bytes", "bytes", "peak resident memory of the process", kMachineDependent,
      TableRow{"peak memory", "MB", 1e-6, 0}, [](const DecodeResult& r) { return r.figures.peak_rss_bytes; });
  return table;
}

// False for a figure only the engine measures, when the backend did not measure it.
bool measured(const Metric& metric, const DecodeResult& result) {
  return !(metric.flags & kMeasuredOnly) || result.figures.measured;
}

}  // namespace

nlohmann::json::json_pointer pointer(const std::string& path) {
  std::string text = "/" + path;
  std::replace(text.begin(), text.end(), '.', '/');
  return nlohmann::json::json_pointer(text);
}

std::string table_cell(const TableRow& row, const nlohmann::json& value) {
  if (value.is_null()) return "—";
  if (value.is_number_unsigned() && row.scale == 1) return std::to_string(value.get<uint64_t>());
  return fmt::format("{:.{}f}", value.get<double>() * row.scale, row.decimals);
}

const std::vector<Metric>& decode_metric_table() {
  static const std::vector<Metric> table = build_table();
  return table;
}

std::vector<std::string> metric_paths(unsigned flag) {
  std::vector<std::string> paths;
  for (const Metric& metric : decode_metric_table())
    if (flag == 0 || (metric.flags & flag)) paths.push_back(metric.path);
  return paths;
}

bool is_decode_metric_path(const std::string& path) {
  for (const Metric& metric : decode_metric_table())
    if (metric.path == path || metric.path.rfind(path + ".", 0) == 0) return true;
  return false;
}

void write_metrics(const DecodeResult& result, nlohmann::json& document) {
  for (const Metric& metric : decode_metric_table()) {
    if (!measured(metric, result)) {
      document[pointer(metric.path)] = nullptr;  // the key stays, so every backend's result has the same keys
      continue;
    }
    nlohmann::json value = metric.read(result);
    if (!value.is_null()) document[pointer(metric.path)] = std::move(value);
  }
}

std::vector<std::vector<std::string>> metric_rows(const DecodeResult& result) {
  std::vector<std::vector<std::string>> rows;
  for (const Metric& metric : decode_metric_table()) {
    if (!metric.row) continue;
    if ((metric.flags & kSpeculative) && !result.metrics.speculative) continue;
    if ((metric.flags & kMoe) && !result.metrics.moe) continue;
    if ((metric.flags & kDefects) && !result.plan.hw.repairs) continue;
    const nlohmann::json value = measured(metric, result) ? metric.read(result) : nlohmann::json();
    rows.push_back({metric.row->label, table_cell(*metric.row, value), metric.row->unit});
  }
  return rows;
}

}  // namespace wafersim::reports
