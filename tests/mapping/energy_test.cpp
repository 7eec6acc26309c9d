// The energy model on compiled plans: the events are those of every tile's
// tasks as the engine runs them, energy adds up over parts of a run, a run
// without work costs only static energy, and each per-event energy moves its
// own figure, and only it, the way it should; on a repaired wafer the bytes
// cross the detours' links too.
#include "models/energy.h"

#include <cstdlib>
#include <functional>

#include <catch2/catch.hpp>

#include "mapping_fixture.h"
#include "models/program_events.h"
#include "sim/experiment/energy_metrics.h"
#include "sim/experiment/metrics.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

Decoded decode_tiny(const std::string& name, std::vector<std::string> overrides = {}) {
  return decode_text("model: " + name + "\nhardware: tiny\nworkload: {prompt_tokens: 16, decode_tokens: 6, seed: 7}\n",
                     overrides);
}

workloads::DecodeInputs inputs_of(const Decoded& d) { return workloads::DecodeInputs(d.plan.model, d.plan.workload); }

// The events of every tile, iteration by iteration and task by task, as the
// engine's dispatch loop executes them (sim/engine/band.cpp): what
// ProgramEvents must equal without walking every tile.
// `only`: the tiles counted (all when empty).
EventCounts walked_events(const ProgramSet& set, const IterationInputs& inputs, uint64_t first, uint64_t last,
                          const std::vector<bool>& only = {}) {
  EventCounts out;
  auto add_work = [&out](const Work& work, Dtype dtype) {
    const int bits = dtype_compute_bits(dtype);
    (bits == 32 ? out.flops_32bit : bits == 16 ? out.flops_16bit : out.flops_8bit) += work.flops;
    out.sram_read_bytes += work.read_bytes;
    out.sram_write_bytes += work.write_bytes;
  };
  for (uint64_t tile = 0; tile < set.tile_program.size(); ++tile) {
    if (set.tile_program[tile] == ProgramSet::kIdle || (!only.empty() && !only[tile])) continue;
    const std::vector<Task>& tasks = set.programs[set.tile_program[tile]].tasks;
    for (uint64_t n = first; n < last; ++n)
      for (size_t pc = 0; pc < tasks.size();) {
        const Task& task = tasks[pc];
        const bool sent = n + task.iteration_delta < set.iterations;
        switch (task.op) {
          case TaskOp::Compute:
            add_work(task.work + task.work_per_position * task_positions(task, set, tile, inputs.context(n)),
                     task.dtype);
            break;
          case TaskOp::Send:
            if (!sent) break;
            if (task.dwafer != 0)
              out.offwafer_bytes += task.bytes;
            else
              // A sidestep leaves the first leg's axis and comes back after it.
              out.link_byte_hops += uint64_t(task.bytes) *
                                    uint64_t(std::abs(task.sidestep) +
                                             (task.y_first ? std::abs(task.dy) + std::abs(task.dx - task.sidestep)
                                                           : std::abs(task.dx) + std::abs(task.dy - task.sidestep)));
            if (task.stream) add_work(task.work, task.dtype);
            break;
          case TaskOp::Multicast:
            if (sent) out.link_byte_hops += uint64_t(task.bytes) * task.count;
            break;
          case TaskOp::SkipUnlessExpert:
          case TaskOp::SkipIfExpert: {
            // Expert by expert, as nothing under test answers it.
            const uint32_t first = task_expert(task, set, tile);
            bool routed = false;
            for (uint32_t e = first; e < first + task.experts; ++e)
              routed = routed || inputs.expert_routed(n, task.moe_layer, e);
            if (routed != (task.op == TaskOp::SkipUnlessExpert)) pc += task.count;
            break;
          }
          default: break;
        }
        ++pc;
      }
  }
  return out;
}

// The decode's energy with one per-event energy (or power) scaled.
EnergyMetrics scaled(Decoded& d, double EnergyParams::*field, double factor) {
  const double kept = d.plan.hw.energy.*field;
  d.plan.hw.energy.*field = kept * factor;
  const EnergyMetrics out = decode_metrics(d.plan, d.timeline, inputs_of(d)).energy;
  d.plan.hw.energy.*field = kept;
  return out;
}

using Part = std::function<double(const EnergyMetrics&)>;
const std::vector<std::pair<std::string, Part>> kParts = {
    {"compute", [](const EnergyMetrics& e) { return e.joules.compute; }},
    {"sram", [](const EnergyMetrics& e) { return e.joules.sram; }},
    {"fabric", [](const EnergyMetrics& e) { return e.joules.fabric; }},
    {"offwafer", [](const EnergyMetrics& e) { return e.joules.offwafer; }},
    {"tile static", [](const EnergyMetrics& e) { return e.joules.tile_static; }},
    {"system fixed", [](const EnergyMetrics& e) { return e.joules.system_fixed; }}};

// Doubling `field` raises `part` (and the energy per token and power),
// halving it lowers it, linearly (the part may have other terms: reads and
// writes are both SRAM), and every other part stays as it was.
void check_moves_only(Decoded& d, double EnergyParams::*field, const std::string& part) {
  const EnergyMetrics base = scaled(d, field, 1), doubled = scaled(d, field, 2), halved = scaled(d, field, 0.5);
  for (const auto& [name, of] : kParts) {
    INFO(name);
    if (name == part) {
      CHECK(of(doubled) > of(base));
      CHECK(of(halved) < of(base));
      CHECK(of(doubled) - of(base) == Approx(2 * (of(base) - of(halved))));
    } else {
      CHECK(of(doubled) == of(base));
    }
  }
  CHECK(doubled.joules_per_token > base.joules_per_token);
  CHECK(halved.joules_per_token < base.joules_per_token);
  CHECK(doubled.average_power_watts > base.average_power_watts);
  CHECK(doubled.events == base.events);  // energies price the events; they never change them
}

}  // namespace

TEST_CASE("the events are every tile's tasks as the engine runs them", "[energy]") {
  // tiny-moe routing 6 of its 8 experts: blocks of one chain routed together, often.
  for (const std::string model : {"tiny-dense", "tiny-moe", "tiny-moe top 6"}) {
    INFO(model);
    const Decoded d =
        model == "tiny-dense"
            ? decode_tiny(model, {"workload.batch=2"})
            : decode_tiny("tiny-moe", model == "tiny-moe" ? std::vector<std::string>{"hardware.wafers=2"}
                                                          : std::vector<std::string>{"model.moe.top_k=6"});
    const workloads::DecodeInputs inputs = inputs_of(d);
    const ProgramSet& set = d.plan.programs;
    const EventCounts walked = walked_events(set, inputs, 0, set.iterations);
    CHECK(walked.flops_16bit > 0);
    CHECK(walked.link_byte_hops > 0);
    CHECK(ProgramEvents(set, nullptr).range(0, set.iterations, inputs) == walked);
    // Per tile and per class, the same events.
    EventCounts tiles;
    for (const EventCounts& tile : ProgramEvents(set, nullptr).per_tile(0, set.iterations, inputs)) tiles += tile;
    CHECK(tiles == walked);
    std::vector<uint32_t> classes(set.tiles());
    for (size_t tile = 0; tile < classes.size(); ++tile) classes[tile] = uint32_t(tile % 3);
    const ProgramEvents by_class(set, nullptr, classes, 3);
    EventCounts summed;
    for (uint64_t n = 0; n < set.iterations; ++n)
      for (const EventCounts& events : by_class.iteration(n, inputs)) summed += events;
    CHECK(summed == walked);
  }
}

TEST_CASE("each region's events are its own tiles' where regions' programs are alike too", "[energy]") {
  // Layers of one shape have the same terms and are counted once per
  // iteration: each must still get its own tiles' events, and MoE layers
  // (their guards name their own layer) their own.
  for (const std::string model : {"tiny-dense", "tiny-moe"}) {
    INFO(model);
    const Decoded d = decode_tiny(model, {"model.n_layers=4"});
    const workloads::DecodeInputs inputs = inputs_of(d);
    const ProgramSet& set = d.plan.programs;
    const size_t regions = d.plan.regions.size();
    std::vector<uint32_t> region_of(set.tiles(), uint32_t(regions));
    for (size_t r = 0; r < regions; ++r) {
      const mapping::BlockGeometry& box = d.plan.regions[r].box;
      for (uint32_t i = 0; i < box.rows; ++i)
        for (uint32_t j = 0; j < box.cols; ++j)
          region_of[(uint64_t(box.wafer) * set.grid_height + box.y(i, j)) * set.grid_width + box.x(i, j)] = uint32_t(r);
    }
    const ProgramEvents by_region(set, nullptr, region_of, uint32_t(regions + 1));
    std::vector<EventCounts> counted(regions + 1);
    for (uint64_t n = 0; n < set.iterations; ++n) {
      const std::vector<EventCounts> events = by_region.iteration(n, inputs);
      for (size_t r = 0; r <= regions; ++r) counted[r] += events[r];
    }
    for (size_t r = 0; r <= regions; ++r) {
      INFO("region " << r);
      std::vector<bool> only(set.tiles());
      for (size_t tile = 0; tile < only.size(); ++tile) only[tile] = region_of[tile] == r;
      CHECK(counted[r] == walked_events(set, inputs, 0, set.iterations, only));
    }
  }
}

TEST_CASE("energy is additive: two halves of a run sum to the whole", "[energy]") {
  for (const std::string model : {"tiny-dense", "tiny-moe"}) {
    INFO(model);
    const Decoded d = decode_tiny(
        model, model == "tiny-moe" ? std::vector<std::string>{"hardware.wafers=2"} : std::vector<std::string>{});
    const workloads::DecodeInputs inputs = inputs_of(d);
    const ProgramSet& set = d.plan.programs;
    const uint64_t half = set.iterations / 2;
    REQUIRE(half > 0);
    const ProgramEvents events(set, nullptr);
    const EventCounts first = events.range(0, half, inputs), second = events.range(half, set.iterations, inputs);
    const EventCounts whole = events.range(0, set.iterations, inputs);
    CHECK(first + second == whole);
    CHECK(first.flops_16bit > 0);
    CHECK(second.flops_16bit > 0);
    // The halves' time too: energy is linear in the events and the cycles.
    const uint64_t cycles = 12345, first_cycles = 5000;
    const EnergyJoules parts_sum = [&] {
      EnergyJoules sum = run_energy(d.plan.hw, first, first_cycles);
      sum += run_energy(d.plan.hw, second, cycles - first_cycles);
      return sum;
    }();
    const EnergyJoules all = run_energy(d.plan.hw, whole, cycles);
    CHECK(parts_sum.compute == Approx(all.compute));
    CHECK(parts_sum.sram == Approx(all.sram));
    CHECK(parts_sum.fabric == Approx(all.fabric));
    CHECK(parts_sum.offwafer == Approx(all.offwafer));
    CHECK(parts_sum.tile_static == Approx(all.tile_static));
    CHECK(parts_sum.total() == Approx(all.total()));
  }
}

TEST_CASE("zero work costs only static energy", "[energy]") {
  const Decoded d = decode_tiny("tiny-dense");
  HardwareSpec hw = d.plan.hw;
  hw.energy.system_fixed_watts = 1000;  // tiny has no system around it; give it one to count
  // Programs that only wait and mark: no event at all.
  ProgramSet set;
  set.grid_width = 2;
  set.grid_height = 1;
  set.iterations = 4;
  Task mark;
  mark.op = TaskOp::Mark;
  set.programs.push_back({{mark, mark}});
  set.tile_program = {0, 0};
  const workloads::DecodeInputs inputs = inputs_of(d);
  CHECK(ProgramEvents(set, nullptr).range(0, set.iterations, inputs) == EventCounts{});

  const uint64_t cycles = 2200000;  // 2 ms at 1.1 GHz
  const EnergyJoules idle = run_energy(hw, EventCounts{}, cycles);
  CHECK(idle.compute == 0);
  CHECK(idle.sram == 0);
  CHECK(idle.fabric == 0);
  CHECK(idle.offwafer == 0);
  CHECK(idle.tile_static == Approx(256 * 2200000 * hw.energy.tile_static_pj_per_cycle * 1e-12));
  CHECK(idle.system_fixed == Approx(1000 * 2e-3));
  CHECK(idle.total() == Approx(idle.static_total()));
  CHECK(idle.total() / 2e-3 == Approx(static_watts(hw)));
  // And no time, no energy.
  CHECK(run_energy(hw, EventCounts{}, 0).total() == 0);
}

TEST_CASE("on a repaired wafer a message's bytes cross its detour's links too", "[energy][defects]") {
  const Decoded d = decode_tiny("tiny-dense");
  ProgramSet set;
  set.grid_width = 1;
  set.grid_height = 1;
  set.iterations = 1;
  Task send;  // 3 + 1 logical hops
  send.op = TaskOp::Send;
  send.dx = 3;
  send.dy = -1;
  send.bytes = 10;
  Task multicast;  // to the next 2 tiles eastwards
  multicast.op = TaskOp::Multicast;
  multicast.count = 2;
  multicast.bytes = 5;
  Task offwafer = send;  // between wafers: no mesh link
  offwafer.dwafer = 1;
  offwafer.bytes = 7;
  set.programs.push_back({{send, multicast, offwafer}});
  set.tile_program = {0};
  const workloads::DecodeInputs inputs = inputs_of(d);
  const DetourTable detours{{0, 1, 1, 2, 2}};  // as message_cycles charges: 4 hops pay 2 more, 2 hops 1 more
  const EventCounts perfect = ProgramEvents(set, nullptr).range(0, 1, inputs);
  const EventCounts repaired = ProgramEvents(set, &detours).range(0, 1, inputs);
  CHECK(perfect.link_byte_hops == 10 * 4 + 5 * 2);
  CHECK(repaired.link_byte_hops == 10 * (4 + 2) + 5 * (2 + 1));
  CHECK(repaired.offwafer_bytes == perfect.offwafer_bytes);
  // A table of no extra hops (a repair that retired only lines beyond the logical grid) counts the logical hops.
  const DetourTable none{{0, 0, 0}};
  CHECK(ProgramEvents(set, &none).range(0, 1, inputs) == perfect);
}

TEST_CASE("multiply-add energies move the compute energy, by arithmetic width", "[energy]") {
  Decoded bf16 = decode_tiny("tiny-dense");
  check_moves_only(bf16, &EnergyParams::fmac_pj_16bit, "compute");
  check_moves_only(bf16, &EnergyParams::fmac_pj_32bit, "compute");  // norms and softmax in fp32
  Decoded fp8 = decode_tiny("tiny-dense", {"model.weight_dtype=fp8", "model.kv_dtype=fp8"});
  check_moves_only(fp8, &EnergyParams::fmac_pj_8bit, "compute");
}

TEST_CASE("SRAM read and write energies move the SRAM energy", "[energy]") {
  Decoded d = decode_tiny("tiny-dense");
  check_moves_only(d, &EnergyParams::sram_read_pj_per_byte, "sram");
  check_moves_only(d, &EnergyParams::sram_write_pj_per_byte, "sram");
}

TEST_CASE("the link energy moves the fabric energy", "[energy]") {
  Decoded d = decode_tiny("tiny-dense");
  check_moves_only(d, &EnergyParams::link_pj_per_byte_hop, "fabric");
}

TEST_CASE("the off-wafer energy moves the off-wafer energy of a plan over two wafers", "[energy]") {
  Decoded d = decode_tiny("tiny-dense", {"hardware.wafers=2", "mapping.dataflow=root"});
  REQUIRE(d.plan.hw.wafers == 2);
  check_moves_only(d, &EnergyParams::offwafer_pj_per_byte, "offwafer");
}

TEST_CASE("static power and the system's fixed power move the static energy", "[energy]") {
  Decoded d = decode_tiny("tiny-dense", {"hardware.energy.system_fixed_watts=500"});
  check_moves_only(d, &EnergyParams::tile_static_pj_per_cycle, "tile static");
  check_moves_only(d, &EnergyParams::system_fixed_watts, "system fixed");
}

TEST_CASE("the peak power is at least the average, and a rating below it is exceeded", "[energy]") {
  Decoded d = decode_tiny("tiny-dense", {"hardware.energy.peak_window_cycles=500"});
  EnergyMetrics e = decode_metrics(d.plan, d.timeline, inputs_of(d)).energy;
  CHECK(e.peak_power_watts > e.average_power_watts);  // windows much shorter than the run find its busy spans
  CHECK(e.rated_power_watts == 0);                    // tiny has no published rating
  CHECK_FALSE(e.exceeds_rating());
  d.plan.hw.energy.rated_power_watts = (e.average_power_watts + e.peak_power_watts) / 2;
  e = decode_metrics(d.plan, d.timeline, inputs_of(d)).energy;
  CHECK(e.exceeds_rating());
  d.plan.hw.energy.peak_window_cycles = 1000000000;  // longer than the run: the peak is the average
  e = decode_metrics(d.plan, d.timeline, inputs_of(d)).energy;
  CHECK(e.peak_power_watts == e.average_power_watts);
  CHECK_FALSE(e.exceeds_rating());
}
