// The prefill's chunk is checked against every tile's SRAM: a step holds its
// inputs and outputs for every token of the chunk, so a chunk too large for
// the tiles is cut to the largest that fits. Here every tile of the prefill
// plan is recounted step by step (not on the edge tiles the compiler visits),
// and the chunk one token larger is shown not to fit.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "mapping/tile_sram.h"
#include "mapping/timeline.h"
#include "models/dtype.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/prefill_inputs.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

// The fullest tile of the plan's regions, every tile visited, the runtime reserve included.
uint64_t fullest_tile_bytes(const mapping::Plan& plan) {
  uint64_t fullest = 0;
  for (const mapping::Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      for (uint32_t i = 0; i < block.geo.rows; ++i)
        for (uint32_t j = 0; j < block.geo.cols; ++j) {
          const mapping::TileSram sram =
              mapping::tile_sram(block, i, j, plan.workload.max_context(), plan.options.stream_buffer_bytes);
          fullest = std::max(fullest, plan.hw.tile.runtime_reserved_bytes + sram.weights + sram.kv + sram.activations);
        }
  return fullest;
}

Experiment tiny_prefill(uint64_t chunk_tokens, bool fits_sram = true) {
  // The distributed dataflow, whose residual stream stays as slices on the root column.
  return load_experiment_text(zoo_experiment("tiny-dense", "tiny", 2048, 2), "prefill.yaml",
                              {"workload.prefill=true", "workload.prefill_chunk_tokens=" + std::to_string(chunk_tokens),
                               std::string("mapping.prefill_chunk=") + (fits_sram ? "largest_fitting" : "as_asked"),
                               "mapping.dataflow=distributed"});
}

}  // namespace

TEST_CASE("a prefill chunk too large for the tiles' SRAM is cut to the largest that fits", "[mapping][prefill][sram]") {
  const mapping::Plan decode = compile(tiny_prefill(2048));
  const uint64_t chunk = mapping::prefill_chunk_tokens(decode);
  const mapping::PrefillSram sram = mapping::prefill_sram(decode, chunk);
  INFO("chunk " << chunk << " of 2048, peak " << sram.peak_bytes << " bytes");
  REQUIRE(chunk >= 1);
  REQUIRE(chunk < 2048);
  CHECK(mapping::largest_fitting_chunk(decode) == chunk);

  const mapping::Plan prefill = mapping::compile_prefill_plan(decode);
  CHECK(prefill.workload.prefill_chunk_tokens == chunk);
  CHECK(prefill.tokens_per_iteration <= chunk);
  CHECK(prefill.programs.iterations == prefill.workload.prefill_chunks());
  // Every tile, counted step by step, fits, and the compiler's peak is the fullest tile's.
  CHECK(fullest_tile_bytes(prefill) <= decode.hw.tile.sram_bytes);
  CHECK(fullest_tile_bytes(prefill) == sram.peak_bytes);
  CHECK(prefill.sram_peak_bytes == sram.peak_bytes);

  // One token more does not fit: asked for it, the compiler comes back to the same chunk.
  CHECK(mapping::prefill_chunk_tokens(compile(tiny_prefill(chunk + 1))) == chunk);
  // Without the check the chunk is taken as asked, and what would fit is still known.
  const mapping::Plan unchecked = compile(tiny_prefill(2048, false));
  CHECK(mapping::prefill_chunk_tokens(unchecked) == 2048);
  CHECK(mapping::largest_fitting_chunk(unchecked) == chunk);
  CHECK(mapping::prefill_sram(unchecked, 2048).peak_bytes > decode.hw.tile.sram_bytes);
  // A chunk that fits is taken as asked.
  CHECK(mapping::prefill_chunk_tokens(compile(tiny_prefill(chunk / 2))) == chunk / 2);
}

TEST_CASE("a prefill step keeps its buffers and the residual stream for every token of the chunk",
          "[mapping][prefill][sram]") {
  const uint64_t one_chunk = 1, chunk = 8;
  const mapping::Plan one = mapping::compile_prefill_plan(compile(tiny_prefill(one_chunk)));
  const mapping::Plan eight = mapping::compile_prefill_plan(compile(tiny_prefill(chunk)));
  REQUIRE(one.tokens_per_iteration == one_chunk);
  REQUIRE(eight.tokens_per_iteration == chunk);
  const mapping::Block& block_one = one.regions[1].blocks[0];  // layer 0
  const mapping::Block& block_eight = eight.regions[1].blocks[0];
  REQUIRE(block_one.geo.rows == block_eight.geo.rows);
  const workloads::ModelSpec& m = one.model;
  // A root-column tile below the root keeps its slice of the residual stream
  // for each token, beside its largest step's buffers, which grow too.
  const uint32_t i = block_one.geo.rows - 1, j = block_one.geo.root_j();
  const uint64_t slice_bytes = dtype_bytes(m.activation_dtype, block_one.geo.largest_row_share(m.d_model));
  const uint64_t stream = one.options.stream_buffer_bytes;
  const uint64_t at_one = mapping::tile_sram(block_one, i, j, one.workload.max_context(), stream).activations;
  const uint64_t at_eight = mapping::tile_sram(block_eight, i, j, eight.workload.max_context(), stream).activations;
  INFO("tile (" << i << ", " << j << "): " << at_one << " bytes at one token, " << at_eight << " at " << chunk);
  CHECK(at_eight > at_one + (chunk - 1) * slice_bytes);
  // The stream's slices sit beside the largest step's buffers, one per token.
  uint64_t largest_step = 0;
  for (const auto& step : block_eight.steps) largest_step = std::max(largest_step, step->activation_bytes(i, j));
  CHECK(at_eight == largest_step + chunk * slice_bytes);
  // Decode's buffers are the one-token chunk's.
  const mapping::Plan decode = compile(tiny_prefill(one_chunk));
  CHECK(mapping::tile_sram(decode.regions[1].blocks[0], i, j, decode.workload.max_context(), stream).activations ==
        at_one);
}

// A prefill laid out as the grid under decode's groups keeps the prompt's grid
// entries beside decode's cache: the compiler's one-token prefill check counts
// them, so a plan made to fit takes its prompt (every tile recounted).
TEST_CASE("a grid prefill's prompt entries count where the compiler fits a one-token prefill",
          "[mapping][prefill][sram][grid]") {
  const Experiment grid = load_experiment_text(
      zoo_experiment("tiny-dense", "tiny", 2000, 4), "prefill.yaml",
      {"workload.prefill=true", "mapping.prefill_chunk=largest_fitting", "mapping.prefill_attention=grid"});
  const mapping::Plan decode = compile(grid);
  const uint64_t chunk = mapping::prefill_chunk_tokens(decode);
  REQUIRE(chunk >= 1);
  const mapping::Plan prefill = mapping::compile_prefill_plan(decode);
  CHECK(fullest_tile_bytes(prefill) <= decode.hw.tile.sram_bytes);
  CHECK(fullest_tile_bytes(prefill) == mapping::prefill_sram(decode, chunk).peak_bytes);
}

namespace {

Experiment tiny_chunk_choice(const std::string& choice, uint64_t chunk_tokens,
                             const std::vector<std::string>& sets = {}) {
  std::vector<std::string> all = {"workload.prefill=true",
                                  "workload.prefill_chunk_tokens=" + std::to_string(chunk_tokens),
                                  "mapping.prefill_chunk=" + choice, "mapping.dataflow=distributed"};
  all.insert(all.end(), sets.begin(), sets.end());
  return load_experiment_text(zoo_experiment("tiny-dense", "tiny", 2048, 2), "prefill.yaml", all);
}

// The closed form's prefill in chunks of `chunk_tokens`, taken as asked, on
// the same regions as `decode`'s: its last chunk's exit.
uint64_t prefill_cycles_at(const mapping::Plan& decode, uint64_t chunk_tokens,
                           const std::vector<std::string>& sets = {}) {
  const mapping::Plan as_asked = compile(tiny_chunk_choice("as_asked", chunk_tokens, sets));
  REQUIRE(as_asked.regions.size() == decode.regions.size());
  for (size_t r = 0; r < decode.regions.size(); ++r) {
    REQUIRE(as_asked.regions[r].box.x0 == decode.regions[r].box.x0);
    REQUIRE(as_asked.regions[r].box.y0 == decode.regions[r].box.y0);
    REQUIRE(as_asked.regions[r].box.tiles() == decode.regions[r].box.tiles());
  }
  const mapping::Plan prefill = mapping::compile_prefill_plan(as_asked);
  REQUIRE(prefill.workload.prefill_chunk_tokens == chunk_tokens);
  return mapping::last_exit_cycle(mapping::analytic_timeline(prefill, workloads::PrefillInputs(prefill.workload)));
}

}  // namespace

// Small chunks fill the layer pipeline sooner, large ones pay each step's
// fixed costs fewer times: the fastest chunk lies between, and every chunk
// that fits is timed here to find it.
TEST_CASE("fastest_fitting takes the chunk that fits whose prefill the closed form times fastest",
          "[mapping][prefill][sram]") {
  const mapping::Plan decode = compile(tiny_chunk_choice("fastest_fitting", 2048));
  const uint64_t largest = mapping::largest_fitting_chunk(decode);
  const uint64_t chosen = mapping::prefill_chunk_tokens(decode);
  REQUIRE(largest >= 2);
  REQUIRE(chosen >= 1);
  REQUIRE(chosen <= largest);
  // The chunk the prefill carries (prefill_chunk_size()), which `map` and `run` both show.
  CHECK(mapping::compile_prefill_plan(decode).tokens_per_iteration == chosen);
  std::vector<uint64_t> cycles(largest + 1);
  for (uint64_t chunk = 1; chunk <= largest; ++chunk) cycles[chunk] = prefill_cycles_at(decode, chunk);
  const uint64_t fastest = *std::min_element(cycles.begin() + 1, cycles.end());
  INFO("chosen " << chosen << " of 1.." << largest << ": " << cycles[chosen] << " cycles; fastest " << fastest
                 << "; one token " << cycles[1] << ", the largest " << cycles[largest]);
  // The fastest lies strictly inside the range, so neither end is the answer by default.
  REQUIRE(fastest < cycles[1]);
  REQUIRE(fastest < cycles[largest]);
  CHECK(cycles[chosen] == fastest);
  // On a tie the larger chunk (fewer chunks for the engine).
  for (uint64_t chunk = chosen + 1; chunk <= largest; ++chunk) CHECK(cycles[chunk] > fastest);
}
