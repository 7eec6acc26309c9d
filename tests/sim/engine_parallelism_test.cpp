// The parallelism profile (EngineOptions::parallelism_profile): what a
// parallel engine could overlap, counted on the serial run. Its counts must
// add up to the run's, and a split must find the work where it is.
#include <catch2/catch.hpp>

#include "sim/engine/engine.h"
#include "sim/engine/parallelism_profile.h"
#include "sim/engine/synthetic_traffic.h"
#include "tests/sim/program_builder.h"
#include "tests/sim/test_hardware.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const sim::ParallelismSplit& split_of(const sim::ParallelismProfile& profile, sim::Partition partition,
                                      uint32_t threads) {
  for (const sim::ParallelismSplit& split : profile.splits)
    if (split.partition == partition && split.threads == threads) return split;
  FAIL("no split of " << sim::partition_name(partition) << " over " << threads << " threads");
  throw;
}

double event_bound(const sim::ParallelismProfile& profile, const sim::ParallelismSplit& split) {
  return double(profile.events) / double(split.critical_events);
}

}  // namespace

TEST_CASE("a parallelism profile accounts for every event of random traffic", "[engine][parallelism]") {
  sim::TrafficSpec spec;
  spec.traffic = "random";
  spec.grid_width = 48;
  spec.grid_height = 40;
  spec.events = 48 * 40 * 12 * 2;
  const sim::SyntheticTraffic traffic = sim::make_traffic(spec);
  sim::EngineOptions options;
  options.bands = 4;
  options.parallelism_profile = true;
  const HardwareSpec hw = wse3_like(48, 40);
  const sim::EngineResult result = sim::run_programs(hw, traffic.programs, sim::SteadyInputs(), options);
  const sim::ParallelismProfile& profile = result.parallelism;

  CHECK(profile.events == result.events);
  uint64_t band_sum = 0;
  for (uint64_t events : profile.band_events) band_sum += events;
  CHECK(band_sum == result.events);
  CHECK(profile.band_events.size() == 4);
  CHECK(profile.window_cycles == hw.fabric.hop_latency_cycles);
  CHECK(profile.least_message_cycles >= profile.window_cycles);
  CHECK(profile.windows > 0);
  CHECK(profile.windows <= result.end_cycle + 1);

  const sim::ParallelismSplit& one = split_of(profile, sim::Partition::Bands, 1);
  CHECK(one.critical_events == result.events);
  CHECK(one.cross_thread_messages == 0);
  for (const sim::ParallelismSplit& split : profile.splits) {
    INFO(sim::partition_name(split.partition) << " over " << split.threads << " threads");
    CHECK(split.critical_events <= result.events);
    CHECK(split.critical_events * split.threads >= result.events);
  }
  // Every tile sends and receives alike, so any split of the rows or columns
  // shares the work; each cycle holds few events on this small grid, so a
  // cycle's halves are uneven (about 1.45x, not 2x, measured).
  for (sim::Partition partition :
       {sim::Partition::Bands, sim::Partition::RowsInterleaved, sim::Partition::ColumnsInterleaved})
    CHECK(event_bound(profile, split_of(profile, partition, 2)) > 1.3);
  // Random destinations: more threads, more messages between them.
  const uint64_t rows2 = split_of(profile, sim::Partition::RowsInterleaved, 2).cross_thread_messages;
  const uint64_t rows16 = split_of(profile, sim::Partition::RowsInterleaved, 16).cross_thread_messages;
  CHECK(rows2 > 0);
  CHECK(rows16 > rows2);
  CHECK(split_of(profile, sim::Partition::Bands, 4).cross_thread_messages >
        split_of(profile, sim::Partition::Bands, 2).cross_thread_messages);
}

TEST_CASE("work on one band's rows cannot be split by bands but can by columns", "[engine][parallelism]") {
  // Rows 0 and 1 of 8 (band 0 of 4): each tile passes a message east, all at once.
  const uint32_t width = 16, height = 8;
  ProgramSet set = empty_set(width, height);
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      std::vector<Task> tasks;
      if (x + 1 < width) tasks.push_back(send(1, 0, 64));
      if (x > 0) tasks.push_back(wait(1));
      place(set, x, y, tasks);
    }
  sim::EngineOptions options;
  options.bands = 4;
  options.parallelism_profile = true;
  const sim::EngineResult result = sim::run_programs(wse3_like(width, height), set, sim::SteadyInputs(), options);
  const sim::ParallelismProfile& profile = result.parallelism;

  REQUIRE(profile.events == result.events);
  CHECK(profile.band_events[0] == result.events);
  for (uint32_t threads : {2u, 4u}) {
    CHECK(split_of(profile, sim::Partition::Bands, threads).critical_events == result.events);
    CHECK(split_of(profile, sim::Partition::Bands, threads).cross_thread_messages == 0);
  }
  // The two rows are even and odd, the columns alternate: both halve the work.
  CHECK(event_bound(profile, split_of(profile, sim::Partition::RowsInterleaved, 2)) == Approx(2.0));
  CHECK(event_bound(profile, split_of(profile, sim::Partition::ColumnsInterleaved, 2)) > 1.8);
  // Every message goes east: from one column's thread to the next's, never between rows.
  CHECK(split_of(profile, sim::Partition::RowsInterleaved, 2).cross_thread_messages == 0);
  CHECK(split_of(profile, sim::Partition::ColumnsInterleaved, 2).cross_thread_messages == 2 * (width - 1));
}

TEST_CASE("a barrier and a hand-off are timed only between threads", "[engine][parallelism]") {
  CHECK(sim::barrier_seconds(1, 1000) == 0);
  CHECK(sim::handoff_seconds(0, 1000) == 0);
  CHECK(sim::barrier_seconds(2, 200) > 0);
  CHECK(sim::handoff_seconds(16, 200) >= 0);
}
