#include "sim/experiment/energy_metrics.h"

#include <algorithm>
#include <map>

#include "models/program_events.h"

namespace wafersim {

namespace {

// Dynamic joules in windows of `width` cycles over [0, end): those starting
// at multiples of `width`, and one ending at `end`, so every window is whole.
// The aligned windows are a sparse difference array: a run may span far more
// windows than memory holds (a decode of 1e16 cycles), while what its spans
// touch stays a few entries per span.
class Windows {
 public:
  Windows(uint64_t width, uint64_t end)
      : width_(width), end_(end), count_(end / width), final_start_(end > width ? end - width : 0) {}

  // `joules` spent evenly over [a, b); all at a when the span is empty.
  void add(double joules, uint64_t a, uint64_t b) {
    a = std::min(a, end_ - 1);
    b = std::min(std::max(b, a), end_);
    if (b == a) {
      point(a / width_, joules);
      if (a >= final_start_) final_ += joules;
      return;
    }
    const double per_cycle = joules / double(b - a);
    final_ += per_cycle * double(overlap(a, b, final_start_, end_));
    const uint64_t first = a / width_;
    if (first >= count_) return;
    const uint64_t last = std::min((b - 1) / width_, count_ - 1);
    point(first, per_cycle * double(overlap(a, b, first * width_, (first + 1) * width_)));
    if (last == first) return;
    point(last, per_cycle * double(overlap(a, b, last * width_, (last + 1) * width_)));
    if (last > first + 1) {  // the whole windows between
      diff_[first + 1] += per_cycle * double(width_);
      diff_[last] -= per_cycle * double(width_);
    }
  }

  double busiest_joules() {
    flush();
    double most = final_, running = 0;
    for (const auto& [window, change] : diff_) {
      if (window >= count_) break;
      running += change;
      most = std::max(most, running);
    }
    return most;
  }

 private:
  static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    const uint64_t lo = std::max(a, c), hi = std::min(b, d);
    return hi > lo ? hi - lo : 0;
  }
  // Consecutive spans mostly fall in one window: gather them before touching the map.
  void point(uint64_t window, double joules) {
    if (window >= count_) return;
    if (window != pending_window_) {
      flush();
      pending_window_ = window;
    }
    pending_ += joules;
  }
  void flush() {
    if (pending_ != 0) {
      diff_[pending_window_] += pending_;
      diff_[pending_window_ + 1] -= pending_;
    }
    pending_ = 0;
  }

  uint64_t width_, end_, count_, final_start_;
  std::map<uint64_t, double> diff_;
  uint64_t pending_window_ = UINT64_MAX;
  double pending_ = 0;
  double final_ = 0;  // the window ending at `end`
};

double seconds_of(const HardwareSpec& hw, uint64_t cycles) { return hw.cycles_to_us(double(cycles)) / 1e6; }

// Totals, per token and average power of `joules` over `cycles`.
EnergyMetrics summarise_energy(const HardwareSpec& hw, const EventCounts& events, uint64_t cycles, uint64_t tokens) {
  EnergyMetrics m;
  m.events = events;
  m.joules = run_energy(hw, events, cycles);
  m.seconds = seconds_of(hw, cycles);
  m.joules_per_token = tokens ? m.joules.total() / double(tokens) : 0;
  m.average_power_watts = m.seconds > 0 ? m.joules.total() / m.seconds : 0;
  m.peak_power_watts = m.average_power_watts;
  m.rated_power_watts = rated_watts(hw);
  return m;
}

// Each tile's region, regions.size() for a tile outside every region.
std::vector<uint32_t> region_of_tiles(const mapping::Plan& plan) {
  const ProgramSet& set = plan.programs;
  std::vector<uint32_t> region(set.tiles(), uint32_t(plan.regions.size()));
  for (size_t r = 0; r < plan.regions.size(); ++r) {
    const mapping::BlockGeometry& box = plan.regions[r].box;
    for (uint32_t i = 0; i < box.rows; ++i)
      for (uint32_t j = 0; j < box.cols; ++j) {
        const uint64_t tile = (uint64_t(box.wafer) * set.grid_height + box.y(i, j)) * set.grid_width + box.x(i, j);
        if (tile < region.size()) region[tile] = uint32_t(r);
      }
  }
  return region;
}

}  // namespace

CountedEnergy count_energy(const mapping::Plan& plan, const IterationInputs& inputs, const HardwareSpec& hw) {
  CountedEnergy counted;
  counted.regions = plan.regions.size();
  const ProgramEvents counter(plan.programs, plan.hw.fabric.detours.get(), region_of_tiles(plan),
                              uint32_t(counted.regions + 1));
  const uint64_t iterations = plan.programs.iterations;
  const bool windows = hw.energy.peak_window_cycles > 0;
  if (windows) counted.joules.reserve(iterations * (counted.regions + 1));
  for (uint64_t n = 0; n < iterations; ++n)
    for (const EventCounts& events : counter.iteration(n, inputs)) {
      counted.events += events;
      if (windows) counted.joules.push_back(dynamic_energy(hw.energy, events).total());
    }
  return counted;
}

EnergyMetrics energy_metrics(const CountedEnergy& counted, const mapping::DecodeTimeline& timeline, uint64_t cycles,
                             uint64_t tokens, const HardwareSpec& hw) {
  const size_t regions = counted.regions;
  const uint64_t window = hw.energy.peak_window_cycles;
  const bool windowed = window > 0 && cycles > window;
  EnergyMetrics m = summarise_energy(hw, counted.events, cycles, tokens);
  if (!windowed) return m;
  Windows windows(window, cycles);
  const uint64_t iterations = counted.joules.size() / (regions + 1);
  for (uint64_t n = 0; n < iterations; ++n) {
    for (size_t r = 0; r <= regions; ++r) {
      const double joules = counted.joules[n * (regions + 1) + r];
      if (joules == 0) continue;
      // A region's tiles work between its start and finish; tiles outside every region, any time.
      const bool timed = r < regions && r < timeline.start.size() && n < timeline.start[r].size();
      windows.add(joules, timed ? timeline.start[r][n] : 0, timed ? timeline.finish[r][n] : cycles);
    }
  }
  m.peak_power_watts =
      std::max(m.average_power_watts, static_watts(hw) + windows.busiest_joules() / seconds_of(hw, window));
  return m;
}

EnergyMetrics energy_metrics(const mapping::Plan& plan, const IterationInputs& inputs,
                             const mapping::DecodeTimeline& timeline, uint64_t cycles, uint64_t tokens,
                             const HardwareSpec& hw) {
  return energy_metrics(count_energy(plan, inputs, hw), timeline, cycles, tokens, hw);
}

EnergyMetrics stepped_energy_metrics(const HardwareSpec& hw, const std::vector<PhaseEvents>& phases, uint64_t steps,
                                     uint64_t tokens) {
  EventCounts total;
  uint64_t cycles = 0;
  double busiest_watts = 0;
  for (const PhaseEvents& phase : phases) {
    total += phase.events * steps;
    cycles += phase.cycles * steps;
    if (phase.cycles > 0)
      busiest_watts =
          std::max(busiest_watts, dynamic_energy(hw.energy, phase.events).total() / seconds_of(hw, phase.cycles));
  }
  EnergyMetrics m = summarise_energy(hw, total, cycles, tokens);
  m.peak_power_watts = std::max(m.average_power_watts, static_watts(hw) + busiest_watts);
  return m;
}

}  // namespace wafersim
