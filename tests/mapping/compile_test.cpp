// The layer-partitioning compiler: every weight placed once, no tile over its
// SRAM, deterministic plans, wafer counts and "does not fit" errors.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "mapping/plan.h"
#include "mapping/region.h"
#include "models/config/error.h"
#include "models/cost.h"
#include "models/route.h"
#include "sim/experiment/experiment.h"
#include "tests/mapping/mapping_fixture.h"
#include "workloads/model_spec.h"

using namespace wafersim;
using namespace wafersim::testing;

namespace {

const char* const kZoo[] = {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama2-13b",     "codellama-34b",
                            "qwen2-72b",   "qwen3-32b",    "gpt-oss-120b",  "qwen3-235b-a22b"};

mapping::Plan plan_for(const std::string& model, const std::string& hardware = "wse3",
                       const std::vector<std::string>& overrides = {}) {
  return compile(load_experiment_text(zoo_experiment(model, hardware), model + ".yaml", overrides));
}

// Visits every tile of every block: what the compiler's edge-row shortcut must agree with.
struct BruteForce {
  uint64_t weight_elements = 0;
  uint64_t sram_peak_bytes = 0;
};

BruteForce visit_every_tile(const mapping::Plan& plan) {
  BruteForce out;
  const uint64_t context = plan.workload.max_context();
  for (const mapping::Region& region : plan.regions)
    for (const mapping::Block& block : region.blocks)
      for (uint32_t i = 0; i < block.geo.rows; ++i)
        for (uint32_t j = 0; j < block.geo.cols; ++j) {
          uint64_t bytes = plan.hw.tile.runtime_reserved_bytes, activations = 0, kept = 0;
          for (const auto& step : block.steps) {
            const uint64_t weights = step->weight_elements(i, j), biases = step->bias_elements(i, j);
            out.weight_elements += weights + biases;
            bytes += dtype_bytes(step->weight_dtype(), weights) + dtype_bytes(step->bias_dtype(), biases) +
                     step->kv_bytes(i, j, context);
            activations = std::max(activations, step->activation_bytes(i, j));
            kept = std::max(kept, step->kept_bytes(i, j));  // the residual stream, beside every step's buffers
          }
          activations += kept;
          if (i == 0 && j == 0) activations += plan.options.stream_buffer_bytes;
          out.sram_peak_bytes = std::max(out.sram_peak_bytes, bytes + activations);
        }
  return out;
}

uint64_t placed_elements(const mapping::Plan& plan) {
  uint64_t elements = 0;
  for (const mapping::RegionStats& stats : plan.stats) elements += stats.weight_elements;
  return elements;
}

uint64_t placed_bytes(const mapping::Plan& plan) {
  uint64_t bytes = 0;
  for (const mapping::RegionStats& stats : plan.stats) bytes += stats.weight_bytes;
  return bytes;
}

}  // namespace

TEST_CASE("every zoo model places each weight once and fits every tile", "[mapping][zoo]") {
  for (const char* model : kZoo) {
    INFO(model);
    const mapping::Plan plan = plan_for(model);
    const workloads::ParamCounts counts = workloads::count_params(plan.model);
    CHECK(placed_elements(plan) == counts.total);
    CHECK(placed_bytes(plan) == counts.weight_bytes);
    CHECK(plan.sram_peak_bytes <= plan.hw.tile.sram_bytes);
    CHECK(plan.max_context_tokens >= plan.workload.max_context());
    CHECK(plan.tiles_used <= plan.tiles_total);
    CHECK(plan.colors_peak <= plan.hw.fabric.colors - plan.hw.fabric.colors_reserved + 1);
    for (const mapping::RegionStats& stats : plan.stats) CHECK(stats.tiles > 0);
  }
}

TEST_CASE("tile by tile the placements add up and the fullest tile is the one reported", "[mapping]") {
  for (const char* model : {"llama3.1-8b", "tiny-dense", "tiny-moe"}) {
    INFO(model);
    const mapping::Plan plan = plan_for(model, std::string(model).rfind("tiny", 0) == 0 ? "tiny" : "wse3");
    const BruteForce every_tile = visit_every_tile(plan);
    CHECK(every_tile.weight_elements == workloads::count_params(plan.model).total);
    CHECK(every_tile.sram_peak_bytes == plan.sram_peak_bytes);
  }
}

TEST_CASE("plans are deterministic", "[mapping]") {
  const mapping::Plan a = plan_for("tiny-moe", "tiny");
  const mapping::Plan b = plan_for("tiny-moe", "tiny");
  CHECK(a.programs.programs == b.programs.programs);
  CHECK(a.programs.tile_program == b.programs.tile_program);
  CHECK(a.programs.tile_param == b.programs.tile_param);
  CHECK(a.sram_peak_bytes == b.sram_peak_bytes);
}

TEST_CASE("every tile runs its own block's program, shared only where the programs are equal", "[mapping]") {
  for (const char* combine : {"columns", "tree", "root"})
    for (const char* model : {"tiny-dense", "tiny-moe", "gpt-oss-20b"}) {
      INFO(model << ", mapping.moe_combine " << combine);
      const mapping::Plan plan = plan_for(model, std::string(model).rfind("tiny", 0) == 0 ? "tiny" : "wse3",
                                          {std::string("mapping.moe_combine=") + combine});
      const ProgramSet& set = plan.programs;
      size_t tiles = 0;
      for (const mapping::Region& region : plan.regions)
        for (const mapping::Block& block : region.blocks)
          for (uint32_t i = 0; i < block.geo.rows; ++i)
            for (uint32_t j = 0; j < block.geo.cols; ++j, ++tiles) {
              const uint64_t tile =
                  (uint64_t(block.geo.wafer) * plan.hw.grid_height + block.geo.y(i, j)) * plan.hw.grid_width +
                  block.geo.x(i, j);
              REQUIRE(set.tile_program[tile] < set.programs.size());
              REQUIRE(set.programs[set.tile_program[tile]].tasks == block.program(i, j));
            }
      CHECK(tiles > set.programs.size());
    }
}

TEST_CASE("wafers: auto picks the fewest that fit", "[mapping]") {
  CHECK(plan_for("llama3.1-8b").hw.wafers == 1);
  for (const char* model : {"llama3.1-70b", "llama3.1-405b"}) {
    INFO(model);
    const mapping::Plan plan = plan_for(model);
    const workloads::ParamCounts counts = workloads::count_params(plan.model);
    // Enough wafers to hold the weights at all...
    CHECK(uint64_t(plan.hw.wafers) * plan.hw.tiles_per_wafer() * plan.hw.usable_sram_bytes() >= counts.weight_bytes);
    // ...and one fewer does not fit.
    const std::string fewer = "hardware.wafers=" + std::to_string(plan.hw.wafers - 1);
    CHECK_THROWS_AS(plan_for(model, "wse3", {fewer}), mapping::DoesNotFitError);
  }
}

TEST_CASE("a fixed wafer count that is too small names the bytes and the count that fits", "[mapping]") {
  try {
    plan_for("llama3.1-70b", "wse3", {"hardware.wafers=2"});
    FAIL("expected DoesNotFitError");
  } catch (const mapping::DoesNotFitError& error) {
    const std::string message = error.what();
    CHECK(message.find("llama3.1-70b needs") != std::string::npos);
    CHECK(message.find("2 wafer(s) of wse3 hold") != std::string::npos);
    CHECK(message.find("it fits on " + std::to_string(plan_for("llama3.1-70b").hw.wafers) + " wafer(s)") !=
          std::string::npos);
  }
}

TEST_CASE("a plan stays small because tiles with the same role share programs", "[mapping]") {
  const mapping::Plan plan = plan_for("llama3.1-8b");
  CHECK(plan.tiles_used == plan.tiles_total);  // spread over the whole wafer
  CHECK(plan.programs.programs.size() < plan.tiles_used / 100);
  CHECK(plan.plan_bytes > 0);
  CHECK(double(plan.plan_bytes) / double(plan.tiles_total) < 64.0);
}

TEST_CASE("too few colours send routing patterns through relays", "[mapping]") {
  CHECK(plan_for("tiny-dense", "tiny").relays == 0);
  const mapping::Plan starved = plan_for("tiny-dense", "tiny", {"hardware.fabric.colors=6"});
  CHECK(starved.relays > 0);
  CHECK(starved.colors_peak <= 6 - starved.hw.fabric.colors_reserved + 1);
}

TEST_CASE("regions follow token order in a serpentine", "[mapping]") {
  const mapping::Plan plan = plan_for("llama3.1-8b");
  REQUIRE(plan.regions.size() == plan.model.n_layers + 2);
  CHECK(plan.regions.front().name == "embedding");
  CHECK(plan.regions.back().name == "lm_head");
  // Neighbours in token order are neighbours on the wafer: their boxes touch or the strip turns.
  for (size_t r = 1; r < plan.regions.size(); ++r) {
    const mapping::BlockGeometry& a = plan.regions[r - 1].box;
    const mapping::BlockGeometry& b = plan.regions[r].box;
    const bool stacked = a.x0 == b.x0 && (a.y0 + a.height_y() == b.y0 || b.y0 + b.height_y() == a.y0);
    const bool next_strip = b.x0 == a.x0 + a.width_x();
    CHECK((stacked || next_strip));
  }
}

TEST_CASE("mapping.moe_attention_share sets the attention block of MoE regions", "[mapping]") {
  const mapping::Plan by_bytes = plan_for("tiny-moe", "tiny");
  const mapping::Plan quarter = plan_for("tiny-moe", "tiny", {"mapping.moe_attention_share=0.25"});
  for (size_t r = 0; r < quarter.regions.size(); ++r) {
    if (quarter.regions[r].kind != mapping::RegionKind::Moe) continue;
    const mapping::BlockGeometry& attention = quarter.regions[r].blocks[0].geo;
    const mapping::BlockGeometry& box = quarter.regions[r].box;
    // A quarter of the rows, give or take the rounding of whole expert rows.
    CHECK(std::abs(double(attention.rows) / double(box.rows) - 0.25) < 0.15);
    CHECK(attention.rows != by_bytes.regions[r].blocks[0].geo.rows);
  }
}

TEST_CASE("a tile that cannot hold its buffers is reported with its place and bytes", "[mapping]") {
  try {
    plan_for("tiny-dense", "tiny", {"mapping.stream_buffer_bytes=50000"});
    FAIL("expected DoesNotFitError");
  } catch (const mapping::DoesNotFitError& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Contains("does not fit any number of tiny wafers"));
    CHECK_THAT(message, Catch::Contains("tile (x 0, y 0) of wafer 0"));
    CHECK_THAT(message, Catch::Contains("placing activation buffers (50000 B)"));
  }
}

TEST_CASE("mapping.layer_grid fixes every layer region to that many tiles, the measured P x P set-up",
          "[mapping][layer_grid]") {
  const std::vector<std::string> grid = {"model.n_layers=2", "mapping.layer_grid.columns=420",
                                         "mapping.layer_grid.rows=300"};
  const mapping::Plan plan = plan_for("llama3.1-8b", "wse2", grid);
  REQUIRE(plan.regions.size() == 4);  // embedding, two layers, LM head
  for (const mapping::Region& region : plan.regions) {
    INFO(region.name);
    if (region.layer < 0) continue;
    CHECK(region.box.width_x() == 420);
    CHECK(region.box.height_y() == 300);
  }
  // Without it the compiler spreads the same regions over the whole wafer.
  const mapping::Plan spread = plan_for("llama3.1-8b", "wse2", {"model.n_layers=2"});
  CHECK(spread.tiles_used == spread.tiles_total);
  CHECK(plan.tiles_used < spread.tiles_used);

  // A grid too small for a layer's weights does not fit (exit 3), naming the grid.
  try {
    plan_for("llama3.1-8b", "wse2",
             {"model.n_layers=1", "mapping.layer_grid.columns=100", "mapping.layer_grid.rows=100"});
    FAIL("a 100 x 100 layer region cannot hold a Llama 3.1 8B layer");
  } catch (const mapping::DoesNotFitError& error) {
    CHECK_THAT(error.what(), Catch::Contains("mapping.layer_grid of 100 x 100"));
  }
  // A grid so narrow that the embedding table cannot fit a strip of its width does not fit either.
  try {
    plan_for("llama3.1-8b", "wse2",
             {"model.n_layers=1", "mapping.layer_grid.columns=20", "mapping.layer_grid.rows=20"});
    FAIL("the embedding table needs more than a 20-tile-wide strip of a WSE-2");
  } catch (const mapping::DoesNotFitError& error) {
    CHECK_THAT(error.what(), Catch::Contains("every strip is 20 tiles wide, and the embedding needs"));
  }
  // Half a grid, or one larger than the wafer, is bad input at its key.
  CHECK_THROWS_WITH(plan_for("llama3.1-8b", "wse2", {"mapping.layer_grid.columns=420"}),
                    Catch::Contains("mapping.layer_grid needs both columns and rows"));
  CHECK_THROWS_WITH(plan_for("llama3.1-8b", "wse2", {"mapping.layer_grid.columns=800", "mapping.layer_grid.rows=10"}),
                    Catch::Contains("wider than the 757-tile wse2 wafer"));
}

namespace {
// Copies of layer 0's attention groups in `plan`.
uint32_t attention_copies(const mapping::Plan& plan) {
  for (const mapping::Region& region : plan.regions)
    for (const auto& step : region.blocks[0].steps)
      if (const auto* attention = dynamic_cast<const mapping::KvGroupAttention*>(step.get()))
        return attention->groups().copies;
  return 0;
}
}  // namespace

TEST_CASE("mapping.kv_head_copies: auto takes the most copies that cost no wafer, none with grid or root",
          "[mapping]") {
  // tiny-dense: four query heads on two KV heads, one wafer either way.
  const mapping::Plan automatic = plan_for("tiny-dense", "tiny");
  CHECK(automatic.options.kv_head_copies == 2);
  CHECK(attention_copies(automatic) == 2);
  CHECK(attention_copies(plan_for("tiny-dense", "tiny", {"mapping.attention=grid"})) == 1);
  CHECK(plan_for("tiny-dense", "tiny", {"mapping.dataflow=root"}).options.kv_head_copies == 1);
  // A count the query heads per KV head do not divide is rounded down to one they do.
  const mapping::Plan three = plan_for("tiny-dense", "tiny", {"mapping.kv_head_copies=3"});
  CHECK(attention_copies(three) == 2);
  // An 8,000-token context: two copies would take a third tiny wafer where one copy takes two.
  const std::vector<std::string> long_context = {"model.max_positions=16384", "workload.prompt_tokens=8000",
                                                 "hardware.wafers=auto"};
  std::vector<std::string> two = long_context;
  two.push_back("mapping.kv_head_copies=2");
  std::vector<std::string> one = long_context;
  one.push_back("mapping.kv_head_copies=1");
  const mapping::Plan forced = plan_for("tiny-dense", "tiny", two), single = plan_for("tiny-dense", "tiny", one);
  REQUIRE(forced.hw.wafers > single.hw.wafers);
  const mapping::Plan fewest = plan_for("tiny-dense", "tiny", long_context);
  CHECK(fewest.hw.wafers == single.hw.wafers);
  CHECK(fewest.options.kv_head_copies == 1);
  // The copies' KV cache is counted: two copies hold every position twice.
  auto kv_bytes = [](const mapping::Plan& plan) {
    uint64_t bytes = 0;
    for (const mapping::RegionStats& region : plan.stats) bytes += region.kv_bytes;
    return bytes;
  };
  CHECK(kv_bytes(forced) == 2 * kv_bytes(single));
}

TEST_CASE("the slices hand-off sends every other sender's pieces along the receiving line", "[mapping]") {
  // Two wafers, so that some pieces also cross between wafers (those keep the
  // default route); lines along y, so that no hand-off runs along its lines.
  const mapping::Plan plan =
      plan_for("tiny-dense", "tiny", {"hardware.wafers=2", "mapping.strips=2", "mapping.multicast_axis=x"});
  size_t pieces = 0, along_receiving = 0;
  for (const auto& handoff : plan.handoffs) {
    // A hand-off along its lines spreads its pieces instead (the next test).
    if (std::any_of(handoff.begin(), handoff.end(), [](const auto& piece) { return piece.send.sidestep != 0; }))
      continue;
    for (const mapping::Plan::HandoffPiece& piece : handoff) {
      ++pieces;
      const bool same_wafer = piece.send.dwafer == 0;
      CHECK(piece.send.y_first == (same_wafer && piece.from % 2 == 1));
      along_receiving += piece.send.y_first;
    }
  }
  REQUIRE(pieces > 0);
  CHECK(along_receiving > 0);
  CHECK(along_receiving < pieces);
}

namespace {

// A hand-off piece's shift along two parallel lines, and the line it runs on
// (`lane`: its offset across them from the sending line).
struct PieceShift {
  bool along_rows = true;
  int32_t apart = 0, shift = 0, lane = 0, start = 0;  // start: the sender's place along the lines
};

PieceShift piece_shift(const mapping::Region& from, const mapping::Plan::HandoffPiece& piece) {
  const mapping::BlockGeometry& geo = from.blocks[0].geo;
  const Task& send = piece.send;
  PieceShift out;
  out.along_rows = !geo.across_is_x;
  out.apart = out.along_rows ? send.dy : send.dx;
  out.shift = out.along_rows ? send.dx : send.dy;
  const bool shift_first = send.y_first != out.along_rows;  // x first along rows, y first along columns
  out.lane = send.sidestep != 0 ? send.sidestep : shift_first ? 0 : out.apart;
  out.start = int32_t(out.along_rows ? geo.x(piece.from, geo.root_j()) : geo.y(piece.from, geo.root_j()));
  return out;
}

// Each piece's closed form pays its lane (two hops a line beyond the two, a
// turn more off them), and every link of a lane carries one sender's shift at
// most: on the tiny fabric a lane costs so little against a piece that the
// compiler takes as many lanes as shifts overlap. Returns the senders per lane.
std::map<int32_t, size_t> check_lanes(const mapping::Plan& plan, size_t r) {
  std::map<int32_t, size_t> senders_per_lane;
  std::map<std::pair<int32_t, int32_t>, uint32_t> link_sender;  // (lane, link) -> sender
  std::map<int32_t, std::set<uint32_t>> lane_senders;
  for (const mapping::Plan::HandoffPiece& piece : plan.handoffs[r]) {
    const PieceShift at = piece_shift(plan.regions[r], piece);
    const int32_t beyond = std::max({0, std::min(0, at.apart) - at.lane, at.lane - std::max(0, at.apart)});
    const bool off_lines = at.lane != 0 && at.lane != at.apart;
    const uint32_t hops = uint32_t(std::abs(at.shift) + std::abs(at.apart) + 2 * beyond);
    const uint32_t turns =
        at.shift == 0 ? 0 : uint32_t(at.apart != 0) + uint32_t(off_lines) + uint32_t(off_lines && at.apart == 0);
    CHECK(mapping::send_cycles(plan.hw, piece.send) ==
          message_cycles(plan.hw.fabric, hops, turns, piece.send.relays, piece.send.bytes));
    lane_senders[at.lane].insert(piece.from);
    for (int32_t step = 0; step < std::abs(at.shift); ++step) {
      const int32_t link = at.shift > 0 ? at.start + step : at.start - step - 1;
      const auto [it, fresh] = link_sender.emplace(std::make_pair(at.lane, link), piece.from);
      if (!fresh && it->second != piece.from) FAIL("two senders' shifts share lane " << at.lane << ", link " << link);
    }
  }
  for (const auto& [lane, senders] : lane_senders) senders_per_lane[lane] = senders.size();
  return senders_per_lane;
}

}  // namespace

TEST_CASE("a hand-off along the row its two lines share spreads its pieces over rows of their own", "[mapping]") {
  // Two strips on each of two wafers: the regions of a wafer sit side by side,
  // their lines on its row 0 (and the hand-off between wafers keeps its route).
  const mapping::Plan plan = plan_for("tiny-dense", "tiny", {"hardware.wafers=2", "mapping.strips=2"});
  size_t spread = 0;
  for (size_t r = 0; r < plan.handoffs.size(); ++r) {
    const auto& handoff = plan.handoffs[r];
    if (handoff.size() < 2) continue;
    const bool on_one_row = std::all_of(handoff.begin(), handoff.end(), [](const auto& piece) {
      return piece.send.dwafer == 0 && piece.send.dy == 0 && piece.send.dx != 0;
    });
    const bool line_along_x = !plan.regions[r].blocks[0].geo.across_is_x;
    if (!(on_one_row && line_along_x)) {
      // Here the other hand-offs cross between wafers or do not shift along their lines: the plain routes.
      for (const auto& piece : handoff) CHECK(piece.send.sidestep == 0);
      continue;
    }
    INFO("hand-off after region " << r);
    ++spread;
    const std::map<int32_t, size_t> lanes = check_lanes(plan, r);
    // The nearest rows first, each holding as many senders as another give or take one.
    REQUIRE(lanes.size() > 1);
    const int32_t line = int32_t(plan.regions[r].blocks[0].geo.root_y());
    size_t fewest = handoff.size(), most = 0;
    for (const auto& [lane, senders] : lanes) {
      for (int32_t nearer = -std::abs(lane) + 1; nearer < std::abs(lane); ++nearer)
        if (line + nearer >= 0 && line + nearer < int32_t(plan.hw.grid_height)) CHECK(lanes.count(nearer) == 1);
      fewest = std::min(fewest, senders);
      most = std::max(most, senders);
    }
    CHECK(most - fewest <= 1);
  }
  CHECK(spread > 0);
}

TEST_CASE("a hand-off between two lines a few rows apart runs overlapping shifts between and beyond them",
          "[mapping]") {
  // Counts the hand-offs whose pieces shift between two lines apart, and their lanes between and beyond the lines.
  struct Lanes {
    size_t spread = 0, between = 0, beyond = 0;
  };
  auto lanes_of = [](const mapping::Plan& plan, bool along_rows) {
    Lanes out;
    for (size_t r = 0; r < plan.handoffs.size(); ++r) {
      const auto& handoff = plan.handoffs[r];
      if (handoff.size() < 2 || handoff[0].send.dwafer != 0) continue;
      const PieceShift first = piece_shift(plan.regions[r], handoff[0]);
      const bool shifts = std::any_of(handoff.begin(), handoff.end(), [&](const auto& piece) {
        return piece_shift(plan.regions[r], piece).shift != 0;
      });
      if (first.apart == 0 || !shifts) continue;
      INFO("hand-off after region " << r);
      CHECK(first.along_rows == along_rows);
      ++out.spread;
      for (const auto& [lane, senders] : check_lanes(plan, r)) {
        const bool same_side = lane != 0 && (lane > 0) == (first.apart > 0);
        out.between += same_side && std::abs(lane) < std::abs(first.apart);
        out.beyond += lane != 0 && (!same_side || std::abs(lane) > std::abs(first.apart));
      }
    }
    return out;
  };
  // Two strips of two layers on one wafer, lines along x: the turn hands on
  // between lines two rows apart, every piece shifting by the lines' length.
  const Lanes rows = lanes_of(plan_for("tiny-dense", "tiny", {"model.n_layers=4", "mapping.strips=2"}), true);
  CHECK(rows.spread > 0);
  CHECK(rows.between > 0);
  CHECK(rows.beyond > 0);
  // Lines along y, eight columns apart, the pieces shifting by up to six.
  const Lanes columns = lanes_of(
      plan_for("tiny-dense", "tiny", {"mapping.multicast_axis=x", "mapping.strips=2", "model.n_layers=6"}), false);
  CHECK(columns.spread > 0);
  CHECK(columns.between > 0);
}

TEST_CASE("a hand-off's first two senders keep the two plain routes, even where turns are free", "[mapping]") {
  for (const char* turn : {"hardware.fabric.turn_latency_cycles=1", "hardware.fabric.turn_latency_cycles=0"}) {
    const mapping::Plan plan = plan_for("tiny-dense", "tiny", {"model.n_layers=4", "mapping.strips=2", turn});
    size_t checked = 0;
    for (size_t r = 0; r < plan.handoffs.size(); ++r)
      for (const mapping::Plan::HandoffPiece& piece : plan.handoffs[r]) {
        const PieceShift at = piece_shift(plan.regions[r], piece);
        if (piece.send.dwafer != 0 || at.apart == 0 || at.shift == 0 || piece.from > 1) continue;
        INFO(turn << ", hand-off after region " << r << ", sender " << piece.from);
        // Sender 0 sends x first, sender 1 y first: along rows they shift on the sending and the receiving line.
        CHECK(piece.send.sidestep == 0);
        CHECK(piece.send.y_first == (piece.from == 1));
        ++checked;
      }
    CHECK(checked > 0);
  }
}
