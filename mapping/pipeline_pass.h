#pragma once
// One iteration's pass through every region of a plan, from the state earlier
// iterations left the regions' servers in: the closed form's unit of work
// (mapping/timeline.h). Every figure of a pass is a sum or a max of times, so
// a pass from servers and an arrival all shifted by the same time is the same
// pass shifted: what the closed form's shortcuts rely on.
#include <cstdint>
#include <vector>

#include "mapping/plan.h"
#include "mapping/region_spans.h"
#include "mapping/timed.h"

namespace wafersim::mapping {

// When each region is done with the iterations so far: its root, and with the
// slices hand-off each of its root-column tiles.
struct Servers {
  std::vector<Timed> root_free;
  std::vector<std::vector<Timed>> line_free;

  static Servers idle(const Plan& plan);  // before the first iteration
  Servers shifted(const Timed& by) const;
  uint64_t latest_cycle() const;
  bool operator==(const Servers& other) const { return root_free == other.root_free && line_free == other.line_free; }
};

struct Pass {
  std::vector<uint64_t> start, finish;  // [region]: when its root (or first root-column tile) started, and finished
  // How each region's input met its servers: of the parts that waited for a
  // server (or came as it became free: a tie goes to the server), the least
  // cycles they waited (UINT64_MAX: none waited); and whether some part came
  // after its server was free.
  std::vector<uint64_t> least_wait_cycles;  // [region]
  std::vector<uint8_t> came_after_server;   // [region]
  Timed exit;                               // when the iteration left the last region's root
  Servers after;                            // the servers once it has passed
  uint64_t after_latest_cycle = 0;          // after.latest_cycle()

  bool operator==(const Pass& other) const {
    return start == other.start && finish == other.finish && least_wait_cycles == other.least_wait_cycles &&
           came_after_server == other.came_after_server && exit == other.exit && after == other.after &&
           after_latest_cycle == other.after_latest_cycle;
  }
};

// The head steps (Region::head_steps) of each region that takes slices in, as
// they ran last: slices that arrive in the same pattern (relative to the
// earliest) give the same front, shifted, at the same context or at any
// context when the steps did not read it (an input norm's reduce does not);
// never a front whose steps read the routing (none do: they end before an
// MoE layer's dispatch), so MoE passes use it too.
class HeadMemo {
 public:
  explicit HeadMemo(const Plan& plan) : last_(plan.regions.size()) {}
  Front run(const Region& region, size_t r, Front in, const IterationInputs& inputs, uint64_t iteration);

 private:
  struct Entry {
    bool valid = false;
    bool read_context = false;  // the steps asked the context: it is part of the key
    uint64_t context = 0;
    std::vector<Timed> in;  // from the earliest slice
    Front out;              // from the earliest slice
  };
  std::vector<Entry> last_;  // [region]
};

// What each send between regions costs (send_cycles), found once for all the
// passes of a run rather than per pass: the sends by the root to the next
// root, and the slices hand-off's pieces.
struct SendCycles {
  explicit SendCycles(const Plan& plan);
  // A piece of the slices hand-off as a pass reads it (Plan::HandoffPiece without its task).
  struct Piece {
    uint32_t from = 0, to = 0;
    uint64_t cycles = 0;
    Category category = Category::Fabric;
  };
  std::vector<uint64_t> to_next;            // [region]: Plan::region_sends
  std::vector<std::vector<Piece>> handoff;  // [region][piece]: Plan::handoffs
};

// The slices region r hands on (Plan::handoffs) from its output `out`, read
// `from` its start: when the last piece of each of the next region's
// root-column tiles arrives (cycle 0 for a tile no piece reaches).
void handoff_slices(const Plan& plan, const SendCycles& sends, size_t r, const Timed& from, const Front& out,
                    std::vector<Timed>& slices);

// Iteration `iteration`, whose input reaches the first region's root at `arrival`.
// Without `keep_servers`, Pass::after is left empty (its latest cycle is kept):
// all a table of passes from idle servers needs.
Pass run_pass(const Plan& plan, const PlanSpans& spans, const SendCycles& sends, const IterationInputs& inputs,
              uint64_t iteration, const Timed& arrival, Servers servers, HeadMemo* heads = nullptr,
              bool keep_servers = true);

// `later` - `earlier` (cycles no fewer), per critical-path category too: the
// shift that takes one to the other.
Timed time_between(const Timed& earlier, const Timed& later);
// `step` taken `times` times.
Timed repeated(const Timed& step, uint64_t times);

}  // namespace wafersim::mapping
