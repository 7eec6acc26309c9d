#include "sim/serving/serving_sim.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <set>

namespace wafersim::serving {

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Completed: return "completed";
    case Outcome::RejectedRateLimit: return "rate_limit";
    case Outcome::RejectedQueueFull: return "queue_full";
    case Outcome::RejectedContext: return "context";
    case Outcome::Unfinished: return "unfinished";
  }
  return "?";
}

namespace {

using workloads::ClassSpec;
using workloads::RequestClass;
using workloads::SchedulerPolicy;
using workloads::ServingSpec;
using workloads::Session;
using workloads::TransportKind;

constexpr double kNever = std::numeric_limits<double>::infinity();

enum class Phase { Queued, Prefill, Decode, Done };

// A request while the server holds it.
struct Live {
  size_t record = 0;
  size_t session = 0;
  Phase phase = Phase::Queued;
  uint64_t prior_context = 0;  // positions of the session's earlier turns
  uint64_t final_context = 0;  // prior + prompt + output
  uint64_t reserved_kv = 0;    // positions it holds in the KV share
  uint64_t chunks_left = 0, next_chunk_start = 0;
  double next_ready = 0;     // cycles: its next item may enter the pipeline
  double chunk_entered = 0;  // cycles: its last prefill chunk entered the pipeline (the next is ready then)
  double finish = kNever;    // cycles: its last token left the LM head
  bool paused = false;
  bool finishing = false;
  double writer_s = 0;  // the connection's stream writer is busy until then
  uint64_t admitted_order = 0;
  uint64_t steps = 0;  // decode items so far (speculative steps emit several tokens)
};

struct SessionState {
  uint64_t context = 0;  // positions of its completed turns
  bool cached = false;   // those positions are still in the KV share
  double last_use = 0;   // cycles, for least-recently-used eviction
  size_t next_turn = 0;  // synthetic sessions: the next turn to send
  bool busy = false;     // a turn of it is in the system
  bool ended = false;    // a turn was rejected: a synthetic session sends no more
};

struct Arrival {
  double server_cycles;
  uint64_t order;
  size_t session;
  size_t turn;
  double sent_s;
  bool operator>(const Arrival& other) const {
    return server_cycles != other.server_cycles ? server_cycles > other.server_cycles : order > other.order;
  }
};

struct TokenBucket {
  double rate = 0, size = 0, level = 0, updated_s = 0;
  void refill(double now_s) {
    level = std::min(size, level + (now_s - updated_s) * rate);
    updated_s = now_s;
  }
};

class Server {
 public:
  Server(const ServingSpec& spec, const workloads::RequestStream& stream, const StepCosts& costs, uint64_t kv_capacity,
         double clock_ghz)
      : spec_(spec),
        stream_(stream),
        costs_(costs),
        kv_capacity_(kv_capacity),
        hz_(clock_ghz * 1e9),
        sessions_(stream.sessions.size()),
        free_(costs.regions(ItemKind::Decode), 0.0),
        busy_(costs.regions(ItemKind::Decode), 0.0) {
    horizon_ = spec.duration_s > 0 ? spec.duration_s * hz_ : kNever;
    for (size_t c = 0; c < workloads::kRequestClasses; ++c) {
      const ClassSpec& cls = spec.classes[c];
      requests_bucket_[c] = {cls.limit_requests_per_s, cls.limit_burst_requests, cls.limit_burst_requests, 0};
      tokens_bucket_[c] = {cls.limit_tokens_per_min / 60.0, cls.limit_burst_tokens, cls.limit_burst_tokens, 0};
    }
    for (size_t s = 0; s < stream.sessions.size(); ++s)
      for (size_t t = 0; t < stream.sessions[s].turns.size(); ++t)
        if (stream.sessions[s].turns[t].arrival_s >= 0) send(s, t, stream.sessions[s].turns[t].arrival_s);
    const TransportKind kind = spec.transport.kind;
    request_overhead_s_ = (kind == TransportKind::Http ? spec.transport.http_request_overhead_ms
                                                       : spec.transport.websocket_request_overhead_ms) /
                          1e3;
    token_overhead_s_ = (kind == TransportKind::Http ? spec.transport.http_token_overhead_us
                                                     : spec.transport.websocket_token_overhead_us) /
                        1e6;
    one_way_s_ = spec.transport.rtt_ms / 2e3;
  }

  ServingRun run() {
    double now = 0;
    for (;;) {
      if (now > horizon_) break;
      take_arrivals(now);
      release_finished(now);
      if (admission_pending_) admit(now);
      Live* item = pick(now);
      if (item) {
        // Hold the choice until the pipeline can take the item without its
        // waiting at any region root: what becomes ready meanwhile competes too.
        const double entry = no_wait_entry(kind_of(*item), context_of(*item), now);
        if (entry > now) {
          now = advance(now, std::min(entry, horizon_ + 1));
          continue;
        }
        submit(*item, now);
        continue;
      }
      const double next = next_event(now);
      if (next == kNever) break;
      now = advance(now, next);
    }
    return finish_run(now);
  }

 private:
  // ---- arrivals ------------------------------------------------------------

  void send(size_t session, size_t turn, double sent_s) {
    const Session& s = stream_.sessions[session];
    double connect_rtts = 0;
    if (spec_.transport.kind == TransportKind::Http) {
      connect_rtts = spec_.transport.handshake_round_trips;
    } else if (connected_.insert(s.client).second) {
      connect_rtts = spec_.transport.handshake_round_trips + 1;  // the WebSocket upgrade
    }
    const double server_s =
        sent_s + connect_rtts * spec_.transport.rtt_ms / 1e3 + spec_.transport.rtt_ms / 2e3 + request_overhead_s();
    arrivals_.push({server_s * hz_, arrival_order_++, session, turn, sent_s});
  }

  double request_overhead_s() const {
    return spec_.transport.kind == TransportKind::Http ? spec_.transport.http_request_overhead_ms / 1e3
                                                       : spec_.transport.websocket_request_overhead_ms / 1e3;
  }

  void take_arrivals(double now) {
    while (!arrivals_.empty() && arrivals_.top().server_cycles <= now) {
      const Arrival arrival = arrivals_.top();
      arrivals_.pop();
      arrive(arrival);
    }
  }

  void arrive(const Arrival& arrival) {
    const Session& session = stream_.sessions[arrival.session];
    const workloads::Turn& turn = session.turns[arrival.turn];
    const size_t c = size_t(session.request_class);
    RequestRecord record;
    record.id = records_.size();
    record.request_class = session.request_class;
    record.session = arrival.session;
    record.turn = uint32_t(arrival.turn);
    record.prompt_tokens = turn.prompt_tokens;
    record.output_tokens = turn.output_tokens;
    record.sent_s = arrival.sent_s;
    record.server_arrival_s = arrival.server_cycles / hz_;
    SessionState& state = sessions_[arrival.session];
    // The context it will reach if every earlier turn of the session completes first.
    const uint64_t final_context = state.context + turn.prompt_tokens + turn.output_tokens;
    record.context_tokens = final_context;
    const double now_s = record.server_arrival_s;
    TokenBucket& requests = requests_bucket_[c];
    TokenBucket& tokens = tokens_bucket_[c];
    const ClassSpec& cls = spec_.classes[c];
    const double needed_tokens = double(turn.prompt_tokens + turn.output_tokens);
    requests.refill(now_s);
    tokens.refill(now_s);
    if (final_context > kv_capacity_) {
      record.outcome = Outcome::RejectedContext;
    } else if ((cls.limit_requests_per_s > 0 && requests.level < 1) ||
               (cls.limit_tokens_per_min > 0 && tokens.level < needed_tokens)) {
      record.outcome = Outcome::RejectedRateLimit;
    } else if (cls.queue_limit > 0 && queues_[c].size() >= cls.queue_limit) {
      record.outcome = Outcome::RejectedQueueFull;
    } else {
      if (cls.limit_requests_per_s > 0) requests.level -= 1;
      if (cls.limit_tokens_per_min > 0) tokens.level -= needed_tokens;
      Live live;
      live.record = record.id;
      live.session = arrival.session;
      lives_.push_back(live);
      queues_[c].push_back(lives_.size() - 1);
      admission_pending_ = true;
    }
    if (record.outcome != Outcome::Unfinished) state.ended = true;  // a synthetic session stops here
    records_.push_back(record);
  }

  // ---- admission -----------------------------------------------------------

  size_t running() const { return batch_.size(); }

  // The first queued request of class c whose session is free (a turn waits
  // for its session's previous one), rejecting on the way any whose session
  // grew too long for the KV share; queues_[c].end() when there is none.
  std::deque<size_t>::iterator first_eligible(size_t c) {
    for (auto it = queues_[c].begin(); it != queues_[c].end();) {
      Live& live = lives_[*it];
      SessionState& session = sessions_[live.session];
      const RequestRecord& record = records_[live.record];
      if (session.busy) {
        ++it;
        continue;
      }
      if (session.context + record.prompt_tokens + record.output_tokens > kv_capacity_) {
        records_[live.record].outcome = Outcome::RejectedContext;
        session.ended = true;
        it = queues_[c].erase(it);
        continue;
      }
      return it;
    }
    return queues_[c].end();
  }

  // Admits waiting requests while there is room: the highest priority first,
  // within a priority the earliest arrival (paused requests, which hold their
  // KV already, before queued ones of their class). First come, first served:
  // a request that does not fit stops admission (nothing overtakes it).
  void admit(double now) {
    admission_pending_ = false;
    blocked_ = Blocked::No;
    for (;;) {
      size_t best_class = SIZE_MAX;
      bool best_paused = false;
      uint64_t best_id = 0;
      for (size_t c = 0; c < workloads::kRequestClasses; ++c) {
        bool paused = !paused_[c].empty();
        uint64_t id = 0;
        if (paused) {
          id = records_[lives_[paused_[c].front()].record].id;
        } else {
          const auto it = first_eligible(c);
          if (it == queues_[c].end()) continue;
          id = records_[lives_[*it].record].id;
        }
        const int64_t priority = spec_.classes[c].priority;
        const bool better = best_class == SIZE_MAX || priority > spec_.classes[best_class].priority ||
                            (priority == spec_.classes[best_class].priority && id < best_id);
        if (better) {
          best_class = c;
          best_paused = paused;
          best_id = id;
        }
      }
      if (best_class == SIZE_MAX) return;
      const size_t c = best_class;
      if (running() >= spec_.max_batch && !preempt_for(c, now)) {
        blocked_ = Blocked::MaxBatch;
        return;
      }
      if (best_paused) {
        const size_t index = paused_[c].front();
        paused_[c].pop_front();
        lives_[index].paused = false;
        batch_.push_back(index);
        continue;
      }
      const auto it = first_eligible(c);
      if (!start(lives_[*it], now)) {  // no room in the KV share yet
        blocked_ = Blocked::KvShare;
        return;
      }
      batch_.push_back(*it);
      queues_[c].erase(it);
    }
  }

  // Pauses the most recently admitted request of a lower class; false when there is none.
  bool preempt_for(size_t c, double) {
    if (!spec_.preemption) return false;
    const int64_t priority = spec_.classes[c].priority;
    size_t best = SIZE_MAX;
    for (size_t b = 0; b < batch_.size(); ++b) {
      const Live& live = lives_[batch_[b]];
      const size_t lc = size_t(records_[live.record].request_class);
      if (live.finishing || spec_.classes[lc].priority >= priority) continue;
      if (best == SIZE_MAX || live.admitted_order > lives_[batch_[best]].admitted_order) best = b;
    }
    if (best == SIZE_MAX) return false;
    const size_t index = batch_[best];
    batch_.erase(batch_.begin() + long(best));
    Live& live = lives_[index];
    live.paused = true;
    records_[live.record].preemptions++;
    counters_.preemptions++;
    paused_[size_t(records_[live.record].request_class)].push_back(index);
    return true;
  }

  // Reserves the request's KV (evicting idle sessions, least recently used
  // first) and sets up its prefill; false when the KV share cannot hold it yet.
  bool start(Live& live, double now) {
    RequestRecord& record = records_[live.record];
    SessionState& session = sessions_[live.session];
    live.prior_context = session.context;
    live.final_context = session.context + record.prompt_tokens + record.output_tokens;
    record.context_tokens = live.final_context;
    const uint64_t cached = session.cached ? session.context : 0;
    const uint64_t need = live.final_context - cached;
    while (kv_capacity_ - kv_used_ < need) {
      size_t victim = SIZE_MAX;
      for (size_t s : cached_sessions_)
        if (s != live.session && (victim == SIZE_MAX || sessions_[s].last_use < sessions_[victim].last_use)) victim = s;
      if (victim == SIZE_MAX) return false;
      evict(victim);
    }
    if (session.cached) {
      cached_sessions_.erase(live.session);
      session.cached = false;
      kv_used_ -= cached;
    }
    kv_used_ += live.final_context;
    live.reserved_kv = live.final_context;
    session.busy = true;
    // Prefix reuse: the cached positions are not prefilled again.
    const uint64_t prefill_from = cached;
    const uint64_t prefill_tokens = live.prior_context + record.prompt_tokens - prefill_from;
    counters_.reused_prefix_tokens += cached;
    record.prefilled_tokens = prefill_tokens;
    live.next_chunk_start = prefill_from;
    live.chunks_left = (prefill_tokens + costs_.chunk_tokens() - 1) / costs_.chunk_tokens();
    live.phase = live.chunks_left > 0 ? Phase::Prefill : Phase::Decode;
    live.next_ready = now;
    live.admitted_order = admitted_count_++;
    record.admitted_s = now / hz_;
    return true;
  }

  void evict(size_t session) {
    SessionState& state = sessions_[session];
    kv_used_ -= state.context;
    state.cached = false;
    cached_sessions_.erase(session);
    counters_.evictions++;
  }

  // ---- the pipeline --------------------------------------------------------

  // The earliest entry at or after `now` at which an item of this kind and
  // context waits at no region root: holding it at the entry until then
  // changes no exit time (the roots take items in order), and leaves the
  // scheduler free to choose.
  double no_wait_entry(ItemKind kind, double context, double now) {
    costs_.service_cycles(kind, context, service_);
    double entry = now, offset = 0;
    for (size_t r = 0; r < service_.size(); ++r) {
      entry = std::max(entry, free_[r] - offset);
      offset += service_[r] + costs_.transit_cycles(kind, r);
    }
    return entry;
  }

  // Passes one item through every region root from `entry`; returns when it
  // leaves the last one.
  double pass(ItemKind kind, double context, double entry) {
    costs_.service_cycles(kind, context, service_);
    double arrive = entry, finish = entry;
    for (size_t r = 0; r < service_.size(); ++r) {
      const double start = std::max(free_[r], arrive);
      finish = start + service_[r];
      free_[r] = finish;
      busy_[r] += service_[r];
      arrive = finish + costs_.transit_cycles(kind, r);
    }
    last_exit_ = std::max(last_exit_, finish);
    return finish;
  }

  bool prefer_prefill() const {
    switch (spec_.policy) {
      case SchedulerPolicy::PrefillFirst: return true;
      case SchedulerPolicy::DecodeFirst: return false;
      case SchedulerPolicy::Chunked: {
        size_t decoding = 0;
        for (size_t index : batch_) decoding += lives_[index].phase == Phase::Decode;
        // One prefill chunk, then a round of every decoding sequence's token.
        return decodes_since_chunk_ >= decoding;
      }
    }
    return true;
  }

  Live* pick(double now) {
    const bool prefill_first = prefer_prefill();
    Live* best = nullptr;
    auto key = [&](const Live& live) {
      const RequestRecord& record = records_[live.record];
      const bool prefill = live.phase == Phase::Prefill;
      return std::make_tuple(-spec_.classes[size_t(record.request_class)].priority, prefill != prefill_first,
                             live.next_ready, record.id);
    };
    for (size_t index : batch_) {
      Live& live = lives_[index];
      if (live.finishing || live.phase == Phase::Done || live.next_ready > now) continue;
      if (!best || key(live) < key(*best)) best = &live;
    }
    return best;
  }

  static ItemKind kind_of(const Live& live) {
    return live.phase == Phase::Prefill ? ItemKind::Prefill : ItemKind::Decode;
  }

  // Positions the item's tokens attend: a prefill chunk is timed as a whole
  // chunk at its tokens' mean context, as the prefill plan runs it.
  double context_of(const Live& live) const {
    if (live.phase == Phase::Prefill) return double(live.next_chunk_start + (costs_.chunk_tokens() + 1) / 2);
    const RequestRecord& record = records_[live.record];
    return double(live.prior_context + record.prompt_tokens + record.tokens_done + 1);
  }

  // Sends the item into the pipeline at `entry` (where it waits nowhere).
  void submit(Live& live, double entry) {
    RequestRecord& record = records_[live.record];
    const double context = context_of(live);
    if (live.phase == Phase::Prefill) {
      const double exit = pass(ItemKind::Prefill, context, entry);
      counters_.prefill_entry_wait_cycles += entry - std::max(live.next_ready, live.chunk_entered);
      counters_.prefill_pipeline_cycles += exit - entry;
      live.chunk_entered = entry;
      live.next_chunk_start += costs_.chunk_tokens();
      counters_.prefill_chunks++;
      decodes_since_chunk_ = 0;
      if (--live.chunks_left == 0) {
        live.phase = Phase::Decode;
        // The first token follows the last chunk (after the draft's, when speculating).
        live.next_ready = exit + costs_.draft_cycles(context_of(live));
      }
      return;
    }
    // A pipelined verify pass sends its k + 1 positions one after another.
    double exit = 0;
    for (uint32_t position = 0; position < costs_.verify_items(); ++position)
      exit = pass(ItemKind::Decode, context + position, entry);
    decodes_since_chunk_++;
    counters_.decode_steps++;
    counters_.decode_entry_wait_cycles += entry - live.next_ready;
    counters_.decode_pipeline_cycles += exit - entry;
    const uint64_t tokens =
        std::min<uint64_t>(costs_.step_tokens(record.id, live.steps++), record.output_tokens - record.tokens_done);
    for (uint64_t t = 0; t < tokens; ++t) {
      counters_.decode_tokens++;
      record.tokens_done++;
      // Each token streams to the client through the connection's writer.
      live.writer_s = std::max(live.writer_s, exit / hz_) + token_overhead_s_;
      const double received_s = live.writer_s + one_way_s_;
      if (record.tokens_done == 1) record.first_token_s = received_s;
      record.last_token_s = received_s;
    }
    live.next_ready = exit + costs_.transit_cycles(ItemKind::Decode, costs_.regions(ItemKind::Decode) - 1) +
                      costs_.draft_cycles(context_of(live));
    if (record.tokens_done == record.output_tokens) {
      live.finishing = true;
      live.finish = exit;
    }
  }

  void release_finished(double now) {
    for (size_t b = 0; b < batch_.size();) {
      Live& live = lives_[batch_[b]];
      if (!live.finishing || live.finish > now) {
        ++b;
        continue;
      }
      complete(live);
      batch_.erase(batch_.begin() + long(b));
    }
  }

  void complete(Live& live) {
    RequestRecord& record = records_[live.record];
    record.outcome = live.finish <= horizon_ ? Outcome::Completed : Outcome::Unfinished;
    live.phase = Phase::Done;
    SessionState& session = sessions_[live.session];
    const Session& plan = stream_.sessions[live.session];
    session.busy = false;
    session.context = live.final_context;
    session.last_use = live.finish;
    kv_used_ -= live.reserved_kv;
    // The session's cache stays on the wafer while another turn may come.
    if (record.turn + 1 < plan.turns.size()) {
      session.cached = true;
      kv_used_ += session.context;
      cached_sessions_.insert(live.session);
      const workloads::Turn& next = plan.turns[record.turn + 1];
      if (next.arrival_s < 0 && !session.ended)
        send(live.session, record.turn + 1, record.last_token_s + plan.think_time_s);
    }
    admission_pending_ = true;
  }

  // Moves the clock on, counting what held admission back meanwhile (a
  // blocked admission stays blocked until the next admit()).
  double advance(double now, double next) {
    const double span = std::min(next, horizon_) - std::min(now, horizon_);
    if (span > 0) {
      if (blocked_ == Blocked::MaxBatch) counters_.blocked_by_max_batch_cycles += span;
      if (blocked_ == Blocked::KvShare) counters_.blocked_by_kv_cycles += span;
      counters_.batch_size_cycles += span * double(running());
    }
    return next;
  }

  double next_event(double now) const {
    double next = arrivals_.empty() ? kNever : arrivals_.top().server_cycles;
    for (size_t index : batch_) {
      const Live& live = lives_[index];
      if (live.finishing) {
        if (live.finish > now) next = std::min(next, live.finish);
      } else if (live.next_ready > now) {
        next = std::min(next, live.next_ready);
      }
    }
    return next;
  }

  ServingRun finish_run(double now) {
    ServingRun run;
    for (Live& live : lives_)
      if (live.finishing && live.phase != Phase::Done && live.finish <= horizon_) complete(live);
    run.requests = std::move(records_);
    counters_.busy_cycles = busy_.empty() ? 0 : *std::max_element(busy_.begin(), busy_.end());
    counters_.end_cycles = horizon_ != kNever ? horizon_ : std::max(now, last_exit_);
    run.counters = counters_;
    run.clock_hz = hz_;
    run.kv_capacity_tokens = kv_capacity_;
    return run;
  }

  const ServingSpec& spec_;
  const workloads::RequestStream& stream_;
  const StepCosts& costs_;
  uint64_t kv_capacity_, kv_used_ = 0;
  double hz_, horizon_;
  double request_overhead_s_ = 0, token_overhead_s_ = 0, one_way_s_ = 0;
  std::vector<SessionState> sessions_;
  std::set<uint64_t> connected_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<Arrival>> arrivals_;
  uint64_t arrival_order_ = 0;
  std::array<TokenBucket, workloads::kRequestClasses> requests_bucket_{}, tokens_bucket_{};
  std::vector<RequestRecord> records_;
  std::deque<Live> lives_;
  std::array<std::deque<size_t>, workloads::kRequestClasses> queues_, paused_;
  std::vector<size_t> batch_;
  std::set<size_t> cached_sessions_;
  bool admission_pending_ = false;
  enum class Blocked { No, MaxBatch, KvShare } blocked_ = Blocked::No;  // the last admit()'s end
  uint64_t admitted_count_ = 0;
  size_t decodes_since_chunk_ = 0;
  std::vector<double> free_, busy_, service_;
  double last_exit_ = 0;
  ServingCounters counters_;
};

}  // namespace

ServingRun simulate_serving(const ServingSpec& spec, const workloads::RequestStream& stream, const StepCosts& costs,
                            uint64_t kv_capacity_tokens, double clock_ghz) {
  Server server(spec, stream, costs, kv_capacity_tokens, clock_ghz);
  return server.run();
}

}  // namespace wafersim::serving
