// One emulation split over several processes by ranks (RunOptions::partition; docs/parallel.md,
// "Several processes"). Every process keeps a copy of the whole network and runs the programs of
// its share of the ranks. The lookahead is the machine's least send set-up L: a VP whose turn is at
// t hands its message to the network no earlier than t + L (docs/model.md 2.2, 2.15, 2.19), and
// the network reaches a VP only through an arrival or a send's completion, which every copy of the
// network computes alike. So each process commits the events before A + L, A being the earliest
// time a VP of any process may act (the processes' VP events, which they tell each other, and the
// engine's calls from the network, which each sees alike: acts_at), and the messages handed over in
// that window reach the network at A + L or later: at the window's end the processes swap them
// (with the payloads of those to another process's rank), every one numbers them as the single
// process would, and every copy of the network takes them all.
//
// The single process numbers a message by the count of sends before it, in the order of the turns
// that make them: by time, then by rank (the VPs' events of one instant go in rank order, model.md
// 1.3), then in program order. An active message's reply is sent by its handler, in the request's
// arrival, which comes before the VPs' events of its instant and after the arrivals of messages
// with lower ids. Each process knows that order for its own sends, so (time, rank or request id,
// place among the process's sends) sorts the window's sends of every process into it. A handler runs
// in its destination's process only; its reply leaves no sooner than the send set-up after the
// arrival, so in a later window, like any send. A rendezvous (model.md 2.16) is three such sends:
// the request to send, the clear to send (from the request's arrival, or the receiver's turn) and
// the data (from the clear to send's arrival); the data is numbered with its request, just before
// it, where the single process makes it.
#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"
#include "touchstone/packed.hpp"

namespace touchstone {

// Every process's parts, with their sizes, to every process; each keeps its own.
std::vector<std::byte> Partition::all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                             std::span<const std::size_t> from) {
  Packed sending;
  for (const std::size_t n : to) sending.put(static_cast<std::uint64_t>(n));
  sending.bytes.insert(sending.bytes.end(), mine.begin(), mine.end());
  const std::vector<std::byte> all = all_gather(sending.bytes);
  sending = Packed();
  Unpacker in(all);
  std::vector<std::byte> out;
  for (int k = 0; k < count(); ++k) {
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(count()));
    for (auto& n : sizes) n = in.take<std::uint64_t>();
    for (int j = 0; j < count(); ++j) {
      const std::span<const std::byte> part = in.first(sizes[static_cast<std::size_t>(j)]);
      if (j != index()) continue;
      if (part.size() != from[static_cast<std::size_t>(k)]) throw_corrupt_swap("a corrupt exchange of payloads");
      out.insert(out.end(), part.begin(), part.end());
    }
  }
  return out;
}

}  // namespace touchstone

namespace touchstone::detail {

namespace {

// What a process tells the others at a window's end, then one Record per message it handed over.
struct Header {
  Time next = kNever;          // its earliest event, before the window's messages are handed over
  Time acts = kNever;          // its VPs' earliest event, or the earliest receipt: when it may act next
  std::uint64_t not_done = 0;  // its programs that have not ended
  std::uint64_t failed = 0;    // its run failed (its report says why): 1, or 2 for a usage error
  Time failed_at = kNever;     // ... there in the sequential order (Engine::failed_at_, failed_order_)
  std::uint64_t failed_order = 0;
  std::uint64_t failed_before_instant = 0;  // 1: before every event of its instant (a time limit)
  std::uint64_t failed_network_place = 0;   // in a network event: its place at its instant (from 1)
  std::uint64_t failed_in_handler = 0;      // 1: there, in an active message's handler
  std::uint64_t records = 0;
  std::uint64_t barriers = 0;  // BarrierRecords, after the Records
  std::uint64_t receipts = 0;  // Engine::Receipt records, after the BarrierRecords
  std::uint64_t notes = 0;     // bytes of RunOptions::window_notes, after the Receipts
  // Where its messages' payloads are: 0 after each record, 1 sent to their destinations' processes
  // alone (Partition::all_to_all), each process's in the order of its records.
  std::uint64_t payloads_apart = 0;
};
struct Record {
  Stamp sent;  // Engine::HandedHere::sent
  Time start = 0, handed = 0;
  std::uint64_t ctx = 0, size = 0, seq = 0;
  std::uint64_t bytes = 0;  // of payload that follow the record: its destination's process delivers them
  // A rendezvous (docs/model.md 2.16): Msg::Proto; for a request to send its data's size, for a
  // clear to send and the data the data's id; for a synchronous send's acknowledgement the id of
  // the message it acknowledges.
  std::uint64_t rendezvous = 0;
  std::int32_t src = 0, dst = 0, tag = 0, proc = 0;
  // A multicast (docs/model.md 2.11): how many destinations it was planned for, whose world ranks
  // follow the payload.
  std::int32_t fan = 0;
  std::uint8_t proto = 0;
  // Race detection: the sender's vector clock (Msg::vc) follows the destinations, one entry per rank.
  std::uint8_t clocked = 0;
  std::uint8_t synchronous = 0;  // a synchronous send's message: its match is acknowledged (Msg::synchronous)
  std::uint8_t held = 0;         // its send is held until its receive completes (Msg::held_op)
  // Flow control (Engine::await_protocol): an eager message whose send every process decides at the
  // window's end, after the window's first `frees_before` frees of buffer space.
  std::uint8_t undecided = 0;
  std::uint64_t frees_before = 0;
  std::uint64_t numbered_at = 0;  // Engine::HandedHere::numbered_at
};
// This window's arrivals of a process's members at a hardware barrier; with race detection followed
// by what its waiting members have heard of (a vector clock, one entry per rank).
struct BarrierRecord {
  std::uint64_t ctx = 0;
  std::int64_t members = 0, arrived = 0;
  Time latest = 0;
};
// A record's place in the sequential order, and where it lies in the swap's bytes (with its payload
// and a multicast's destinations after it): what is sorted, 40 bytes rather than the record itself,
// since a window can hand over a message for every rank of the machine.
struct Swapped {
  Time turn = 0;
  std::uint64_t order = 0, seq = 0;
  std::size_t at = 0;
  // Its payload: after the record (kInline), sent apart to other processes (kElsewhere), or where it
  // lies among the payloads sent apart to this one.
  std::size_t payload = kInline;
  static constexpr std::size_t kInline = ~std::size_t{0}, kElsewhere = kInline - 1;
};

bool in_sequential_order(const Swapped& a, const Swapped& b) {
  if (a.turn != b.turn) return a.turn < b.turn;
  return a.order != b.order ? a.order < b.order : a.seq < b.seq;
}

// A message's id, and a request to send's data's: the single process numbers messages as they are
// made, a rendezvous's data just before its request to send (Engine::post_send), so the data is
// numbered with the request; the data itself has its id from there.
struct Ids {
  std::uint64_t id, data_id;
};
Ids take_ids(const Record& r, std::uint64_t& next) {
  const auto proto = static_cast<Msg::Proto>(r.proto);
  const std::uint64_t data_id = proto == Msg::Proto::rts ? next++ : 0;
  return {proto == Msg::Proto::rdv_data ? r.rendezvous : next++, data_id};
}

}  // namespace

// Everything a window's swap does not carry, or an order it cannot keep, is refused here, before the
// run starts. What remains is checked by tests against the single process (test_partition.cpp).
void Engine::check_partition() const {
  const auto refuse = [&](const std::string& why) {
    throw UsageError(
        fmt::format("this run cannot be split over {} processes: {} (docs/parallel.md, \"Several processes\")",
                    partition_->count(), why));
  };
  const NetworkParams& net = machine_.net;
  if (partition_->count() < 1 || partition_->index() < 0 || partition_->index() >= partition_->count())
    refuse(fmt::format("process {} of {} does not exist", partition_->index(), partition_->count()));
  if (opts_.execution != Execution::fibers) refuse("each process runs its VPs as fibers");
  if (least_send_setup() <= 0)
    refuse("the machine's least send set-up (C_send - send_tail + s_p) is 0: no lookahead between the processes");
  if (net.barrier == BarrierKind::hardware && net.barrier_latency <= 0)
    refuse("the machine's hardware barrier releases with no latency: no lookahead between the processes");
  if ((net.send_holds_until_received || net.recv_buffer >= 0) && least_recv_overhead() <= 0)
    refuse(fmt::format("{} and the machine's least receive overhead (C_recv) is 0: no lookahead between the processes",
                       net.send_holds_until_received ? "sends are held until their receives complete"
                                                     : "receives free bounded receive buffers"));
}

void Engine::refuse_call(const char* what) const {
  throw UsageError(
      fmt::format("{} cannot be used in a run split over {} processes yet (docs/parallel.md, \"Several "
                  "processes\")",
                  what, partition_->count()));
}

// Flow control in a split run (docs/model.md 2.16): whether a message fits its destination's buffer
// depends on what the other processes' sends of this window take there, which this process learns at
// the window's end. So the message goes into the window's swap as an eager one, undecided, with the
// number of frees of buffer space the loop had made before the send; every process then decides the
// window's undecided sends alike, in the sequential order (at_window_end, protocol_decided). The VP
// waits meanwhile, charged with the eager send's CPU time: it is at least the lookahead, and the
// single process too makes the VP's next call at the send's end (send_protocol).
Op* Engine::await_protocol(Vp& v, Op* op, Msg* m, Time start) {
  handed_here_.push_back(HandedHere{m, Stamp{now_, v.order, place_now_.step}, start, v.clock,
                                    instruments_.hold_sent(*m), true, network_->frees_this_window(),
                                    order_at_instant(v.order)});
  block(v, Vp::Block::sync, Call{});
  return op;
}

// This process's undecided send `h` (await_protocol) went eager, its space reserved, or by rendezvous:
// its VP goes on at the send's end, as from the single process's sync after the send. The active
// messages handled meanwhile were charged to its clock after the send's CPU time (they came before
// the window's end, which is before the send's end either way), so a rendezvous takes back the
// difference between the two sends' times.
void Engine::protocol_decided(HandedHere& h, bool buffered) {
  Msg* m = h.m;
  Op* op = m->send_op;
  Vp& v = *op->vp;
  if (buffered) {
    m->buffered = true;
  } else {
    const Time request = machine_.send_cost(m->src, 0);
    v.clock -= (h.handed - h.start) - request;
    h.handed = h.start + request;
    if (m->sync_op) m->sync_op = nullptr, m->synchronous = false, op->synchronous = false;  // only eager ones
    h.m = request_to_send(op, m);
  }
  v.blocked_since = h.handed;
  queue_.push(h.handed, v.order, Ev::resume, &v, v.token);  // as sync's
}

int Engine::process_of(int rank) const {
  const int n = partition_->count(), nodes = static_cast<int>(vps_.size());
  int k = static_cast<int>(static_cast<std::int64_t>(rank) * n / std::max(nodes, 1));
  while (k > 0 && rank < Partition::ranks_of(k, n, nodes).first) --k;
  while (k + 1 < n && rank >= Partition::ranks_of(k + 1, n, nodes).first) ++k;
  return k;
}

namespace {
// The least of a cost over the machine's nodes.
template <class Cost>
Time least_over_nodes(const Machine& m, Cost cost) {
  Time least = cost(m.costs);
  for (const NodeCosts& c : m.node_costs) least = std::min(least, cost(c));
  return least;
}
}  // namespace

// No message reaches the network sooner after its sender's turn: C_send + L s + n s_p, less the
// send's tail (model.md 2.19), or with send overlap (2.15) C_send - send_tail + s_p + the first
// packet's bytes; at least C_send - send_tail + s_p either way (send_tail <= C_send).
Time Engine::least_send_setup() const {
  return least_over_nodes(machine_,
                          [](const NodeCosts& c) { return c.send_overhead - c.send_tail + c.send_per_packet; });
}

Time Engine::least_recv_overhead() const {
  return least_over_nodes(machine_, [](const NodeCosts& c) { return c.recv_overhead; });
}

// A hardware barrier releases its members barrier_latency after the last arrival, so a barrier
// completed in one process's window reaches the others no sooner either. A receive completes no
// sooner than C_recv after the turn or the arrival that completes it (Engine::complete_recv), and a
// handler ends no sooner than C_recv after its request's arrival (ActiveMessages::on_request): so
// where sends are held until received, or receives free bounded buffers, what a receive decides
// falls in a later window than the receive, and the other processes hear of it in time
// (Engine::receipt_here).
Time Engine::lookahead() const {
  Time least = least_send_setup();
  if (machine_.net.barrier == BarrierKind::hardware) least = std::min(least, machine_.net.barrier_latency);
  if (machine_.net.send_holds_until_received || machine_.net.recv_buffer >= 0)
    least = std::min(least, least_recv_overhead());
  return least;
}

// A receive (or a handler) here ended at t: the sender's process completes a held send then, and
// every process frees the buffer space the message held then. They hear of it at the window's
// end, which lookahead() puts no later than t.
void Engine::receipt_here(const Msg& m, Time t, Receipt::Kind kind) {
  if (t < window_end_)
    abort_run(
        fmt::format("internal error: message #{}'s receive completed at t={} us, inside the window that ends "
                    "at t={} us: the other processes cannot hear of it in time (please report this with the "
                    "command line)",
                    m.id, to_us(t), to_us(window_end_)));
  const bool held = kind == Receipt::Kind::held_send;
  receipts_here_.push_back(Receipt{kind, m.id, t, held ? m.src : m.dst, held ? 0 : m.size});
}

Engine::Window Engine::window_check() {
  if (!queue_.empty() && queue_.next_time() < window_end_) return Window::goes_on;
  return at_window_end() ? Window::crossed : Window::over;
}

// The loop has committed every event before window_end_ (or has none left): the processes swap the
// window's messages and their state, and the next window begins at the earliest event of all.
bool Engine::at_window_end() {
  Packed mine;
  Header h;
  h.next = queue_.empty() ? kNever : queue_.next_time();
  h.acts = queue_.next_vp_time();
  for (const Receipt& r : receipts_here_) {  // held sends' completions, freed buffers
    h.next = std::min(h.next, r.at);
    h.acts = std::min(h.acts, r.at);
  }
  // Nothing this window handed over may reach the network before the window's end (acts_at).
  for (const HandedHere& s : handed_here_)
    if (const Time at = after_tail(s.m->src, s.start, s.handed); at < window_end_)
      abort_run(
          fmt::format("internal error: a message handed over at t={} us, inside the window that ends at "
                      "t={} us (please report this with the command line)",
                      to_us(at), to_us(window_end_)));
  h.not_done = unfinished_contexts();
  h.failed = aborting_ ? (failure_is_usage_ ? 2 : 1) : 0;
  h.failed_at = failed_at_, h.failed_order = failed_order_;
  h.failed_before_instant = failed_before_instant_ ? 1 : 0;
  h.failed_network_place = aborting_ ? failed_network_place_ : 0;
  h.failed_in_handler = aborting_ && failed_in_handler_ ? 1 : 0;
  // A failed process's sends too: those made before the run's failure are numbered (cut_at).
  h.records = handed_here_.size();
  h.barriers = aborting_ ? 0 : barriers_here_.size();
  h.receipts = aborting_ ? 0 : receipts_here_.size();
  const std::vector<std::byte> notes = opts_.window_notes ? opts_.window_notes() : std::vector<std::byte>();
  h.notes = notes.size();
  // The bytes of a message to another process's rank travel with it: its send has not completed (the
  // message has not left), so they are still where the program lent them, or in its own copy.
  const auto elsewhere = [&](const Msg& m) {
    const auto fan = multicast_dsts_.find(&m);
    return fan == multicast_dsts_.end()
               ? !here(m.dst)
               : std::any_of(m.branch.begin(), m.branch.end(), [&](const Msg* b) { return !here(b->dst); });
  };
  const auto payload_of = [&](const Msg& m) {
    return elsewhere(m) && !aborting_ ? m.bytes() : std::span<const std::byte>();  // a failed run delivers none
  };
  const auto vps = static_cast<std::size_t>(machine_.nodes());  // a vector clock's entries
  const bool races = instruments_.detects_races();
  std::size_t payloads = 0;
  for (std::size_t i = 0; i < h.records; ++i) payloads += payload_of(*handed_here_[i].m).size();
  h.payloads_apart = partition_->count() > 2 && payloads > partition_->payloads_inline_up_to();
  const auto parts = static_cast<std::size_t>(partition_->count());
  // Payloads sent apart: once to each other process with a destination of it, in one buffer of
  // every process's part in turn, each part in the order of the records.
  const auto for_each_process_of = [&](const Msg& m, const auto& f) {
    const auto fan = multicast_dsts_.find(&m);
    for (std::size_t k = 0; k < parts; ++k)
      if (static_cast<int>(k) != partition_->index() &&
          (fan == multicast_dsts_.end() ? process_of(m.dst) == static_cast<int>(k)
                                        : std::any_of(fan->second.begin(), fan->second.end(),
                                                      [&](int d) { return process_of(d) == static_cast<int>(k); })))
        f(k);
  };
  mine.put(h);
  for (std::size_t i = 0; i < h.records; ++i) {
    const HandedHere& s = handed_here_[i];
    const Msg& m = *s.m;
    const std::span<const std::byte> bytes = payload_of(m);
    const std::uint64_t rendezvous = m.proto == Msg::Proto::rts        ? m.rdv->size
                                     : m.proto == Msg::Proto::cts      ? m.rdv->id
                                     : m.proto == Msg::Proto::sync_ack ? m.acked
                                                                       : m.id;  // rdv_data's own, from its request
    const auto fan = multicast_dsts_.find(&m);
    const std::span<const int> dsts = fan == multicast_dsts_.end() ? std::span<const int>() : fan->second;
    // What the sender had heard of goes to the receiver's process (race detection, races.hpp).
    const bool clocked = races && m.vc.size() == vps && elsewhere(m);
    auto record = Record{s.sent,
                         s.start,
                         s.handed,
                         m.ctx,
                         m.size,
                         i,
                         bytes.size(),
                         rendezvous,
                         m.src,
                         m.dst,
                         m.tag,
                         partition_->index(),
                         static_cast<std::int32_t>(dsts.size()),
                         static_cast<std::uint8_t>(m.proto),
                         clocked,
                         m.synchronous,
                         m.held_op != nullptr};
    record.undecided = s.undecided;
    record.frees_before = s.frees_before;
    record.numbered_at = s.numbered_at;
    mine.put(record);
    if (!h.payloads_apart) mine.bytes.insert(mine.bytes.end(), bytes.begin(), bytes.end());
    for (const int d : dsts) mine.put(static_cast<std::int32_t>(d));
    if (clocked)
      for (const std::uint32_t c : m.vc) mine.put(c);
  }
  for (std::size_t i = 0; i < h.barriers; ++i) {
    BarrierState& b = barriers_.at(barriers_here_[i]);
    mine.put(BarrierRecord{barriers_here_[i], b.members, b.arrived_here, b.latest});
    b.arrived_here = 0;
    if (!races) continue;
    b.heard.resize(vps, 0);  // what the members arrived so far had heard of: merged again, no harm
    for (const std::uint32_t c : b.heard) mine.put(c);
  }
  for (std::size_t i = 0; i < h.receipts; ++i) mine.put(receipts_here_[i]);
  receipts_here_.clear();
  mine.bytes.insert(mine.bytes.end(), notes.begin(), notes.end());
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  ++windows_;
  mine = Packed();  // its bytes are in `all` now
  Unpacker in(all);
  Time next = kNever;
  // The earliest time a VP of any process may act at (its events, the receipts, what the swap makes
  // for it below); the network's own events, which every process handles alike, do not count.
  Time acts = kNever;
  std::uint64_t not_done = 0;
  int failed = -1;  // the process whose failure comes first in the sequential order
  bool misused = false;
  // RunOptions::window_failure: a call of the turn at first_failure failed, in the part of the turn
  // before its mark (failure_step), or unmarked (layer_failed: no place to cut at).
  bool layer_failed = false;
  std::uint32_t failure_step = Stamp::kWholeTurn;
  std::pair<Time, std::uint64_t> first_failure{kNever, 0};
  bool before_instant = false;  // first_failure is before every event of its instant
  // Every process failed in the same network event (its time and place at its instant), none past it.
  std::pair<Time, std::uint64_t> network_failure{kNever, 0};
  std::uint64_t first_network_place = 0;  // first_failure is in a network event, at this place
  bool in_handler = false;                // ... in an active message's handler
  std::vector<Swapped> records;
  std::vector<Receipt> receipts;            // of this process's held sends
  bool any_apart = false;                   // then every process takes part in the exchange of payloads
  std::vector<std::size_t> from(parts, 0);  // bytes each process sends this one apart
  std::size_t apart_here = 0;               // where the next of them lies among all it receives
  for (int k = 0; k < partition_->count(); ++k) {
    const auto hk = in.take<Header>();
    next = std::min(next, hk.next);
    acts = std::min(acts, hk.acts);
    not_done += hk.not_done;
    any_apart |= hk.payloads_apart != 0;
    // Failures at one instant in the loop's own handling of events are in the order of their network
    // events (two handlers in two processes).
    if (hk.failed && (failed < 0 || std::tuple{hk.failed_at, hk.failed_order, hk.failed_network_place} <
                                        std::tuple{first_failure.first, first_failure.second, first_network_place}))
      failed = k, misused = hk.failed == 2, first_failure = {hk.failed_at, hk.failed_order},
      first_network_place = hk.failed_network_place, before_instant = hk.failed_before_instant == 1,
      in_handler = hk.failed_in_handler != 0;
    if (k == 0) network_failure = {hk.failed_at, hk.failed_network_place};
    if (!hk.failed || hk.failed_network_place == 0 ||
        network_failure != std::pair{hk.failed_at, hk.failed_network_place})
      network_failure = {kNever, 0};
    for (std::uint64_t i = 0; i < hk.records; ++i) {
      const auto at = static_cast<std::size_t>(in.first(0).data() - all.data());
      const auto r = in.take<Record>();
      if (r.bytes > r.size || r.fan < 0 || r.fan > static_cast<std::int32_t>(vps_.size()) ||
          r.proto > static_cast<std::uint8_t>(Msg::Proto::sync_ack))
        throw_corrupt_swap();
      Swapped place{r.sent.t, r.numbered_at, r.seq, at};
      if (r.clocked && !races) throw_corrupt_swap();
      if (r.undecided > 1 || (r.undecided && (r.proto != static_cast<std::uint8_t>(Msg::Proto::eager) || r.fan != 0 ||
                                              !machine_.net.flow_control() || machine_.net.recv_buffer < 0)))
        throw_corrupt_swap();
      if (!hk.payloads_apart) {
        in.first(r.bytes + static_cast<std::size_t>(r.fan) * sizeof(std::int32_t));
      } else {
        bool bound_here = r.fan == 0 && here(r.dst);
        for (std::int32_t j = 0; j < r.fan; ++j) bound_here |= here(in.take<std::int32_t>());
        place.payload = Swapped::kElsewhere;
        if (r.bytes > 0 && bound_here && k != partition_->index()) {
          place.payload = apart_here;
          apart_here += r.bytes;
          from[static_cast<std::size_t>(k)] += r.bytes;
        }
      }
      if (r.clocked) in.first(vps * sizeof(std::uint32_t));
      records.push_back(place);
    }
    for (std::uint64_t i = 0; i < hk.barriers; ++i) {
      const auto b = in.take<BarrierRecord>();
      const std::span<const std::byte> heard_there = in.first(races ? vps * sizeof(std::uint32_t) : 0);
      if (k == partition_->index()) continue;  // counted as they arrived
      barriers_here_.push_back(b.ctx);
      BarrierState& here = barriers_[b.ctx];
      here.members = static_cast<int>(b.members);
      here.arrived += static_cast<int>(b.arrived);
      here.latest = std::max(here.latest, b.latest);
      if (!races) continue;
      here.heard.resize(vps, 0);
      for (std::size_t j = 0; j < vps; ++j) {
        std::uint32_t c = 0;
        std::memcpy(&c, heard_there.data() + j * sizeof c, sizeof c);
        here.heard[j] = std::max(here.heard[j], c);
      }
    }
    for (std::uint64_t i = 0; i < hk.receipts; ++i) {
      const auto r = in.take<Receipt>();
      const bool held = r.kind == Receipt::Kind::held_send;
      if ((!held && r.kind != Receipt::Kind::buffer_freed) || r.rank < 0 || r.rank >= static_cast<std::int64_t>(vps) ||
          (process_of(static_cast<int>(r.rank)) == k) == held)
        throw_corrupt_swap();
      if (k != partition_->index() && (!held || here(static_cast<int>(r.rank)))) receipts.push_back(r);
    }
    // In the window of a failure too: what the processes noted before it (a rank's output held until
    // the window's end, the collectives its ranks entered) is the run's.
    const std::span<const std::byte> notes_k = in.first(hk.notes);
    if (k != partition_->index() && !notes_k.empty() && opts_.on_window_notes) opts_.on_window_notes(k, notes_k);
  }
  // The payloads sent apart, each to its destination's process alone.
  std::vector<std::byte> received_apart;
  if (any_apart) {
    std::vector<std::size_t> to(parts, 0), to_at(parts, 0);
    if (h.payloads_apart)
      for (std::size_t i = 0; i < h.records; ++i)
        if (const std::size_t n = payload_of(*handed_here_[i].m).size(); n > 0)
          for_each_process_of(*handed_here_[i].m, [&](std::size_t k) { to[k] += n; });
    for (std::size_t k = 1; k < parts; ++k) to_at[k] = to_at[k - 1] + to[k - 1];
    std::vector<std::byte> sending(to_at[parts - 1] + to[parts - 1]);
    if (h.payloads_apart)
      for (std::size_t i = 0; i < h.records; ++i)
        if (const std::span<const std::byte> bytes = payload_of(*handed_here_[i].m); !bytes.empty())
          for_each_process_of(*handed_here_[i].m, [&](std::size_t k) {
            std::copy(bytes.begin(), bytes.end(), sending.begin() + static_cast<std::ptrdiff_t>(to_at[k]));
            to_at[k] += bytes.size();
          });
    received_apart = partition_->all_to_all(sending, to, from);
    if (received_apart.size() != apart_here) throw_corrupt_swap("a corrupt exchange of payloads");
  }
  if (opts_.window_failure)
    if (const std::optional<RunOptions::WindowFailure> f = opts_.window_failure()) {
      // At a tie the turn failed at the call the layer names: what else failed in that turn came after.
      const std::pair<Time, std::uint64_t> at{f->at, f->place != 0 ? f->place : vp_order(f->rank)};
      if (failed < 0 || at <= first_failure) {
        failed = process_of(f->rank), misused = true, first_failure = at, layer_failed = f->mark == 0;
        if (f->mark != 0) failure_step = f->mark - 1;  // what the turn did from the call on is past it
        if (failed == partition_->index()) {  // this process's rank: its report, as if its turn had thrown
          failure_ = fmt::format("rank {} failed at t={} us: {}", f->rank, to_us(f->clock), f->what);
          failure_is_usage_ = true;
          std::tie(failed_at_, failed_order_) = at;
          aborting_ = true;
        }
      }
    }
  // Every process has every arrival at the barriers of this window now: the complete ones release.
  // Processes without a member at one keep its count too, and forget it here.
  for (const std::uint64_t ctx : barriers_here_)
    if (const auto it = barriers_.find(ctx);
        failed < 0 && it != barriers_.end() && it->second.arrived == it->second.members) {
      if (races) {
        std::vector<int> members_here;
        for (const Vp* w : it->second.waiting) members_here.push_back(w->rank);
        instruments_.barrier_released(members_here, it->second.heard);
      }
      acts = std::min(acts, it->second.latest + machine_.net.barrier_latency);
      release_barrier(ctx);
    }
  barriers_here_.clear();
  if (failed >= 0) {
    failure_told_ = true;
    // A failure in a context's turn has its place in the sequential order, and so has a time limit,
    // before every event of the first instant past it, and a call a layer marked (Proc::mark) inside
    // a turn. So has one in the handling of a network event: in an active message's handler, whose
    // request's arrival ends its place in every process, or one that every process met there (a
    // route that throws: each handles every network event, in the same order, and none went past
    // it). One a layer finds at an unmarked call, or another of the loop's own, does not.
    const bool in_network = first_failure.second == 0 && !before_instant && first_network_place != 0 &&
                            (in_handler || network_failure == std::pair{first_failure.first, first_network_place});
    if (!layer_failed && (first_failure.second >= vp_order(0) || before_instant || in_network)) {
      std::sort(records.begin(), records.end(), in_sequential_order);
      std::vector<std::size_t> at;
      for (const Swapped& place : records) at.push_back(place.at);
      cut_at(in_network ? Stamp{first_failure.first, first_network_place}
                        : Stamp{first_failure.first, first_failure.second, failure_step},
             all, at);
    }
    // The single process would have stopped at the first failure: a later one in this process is
    // not the run's.
    if (failed != partition_->index()) {
      failure_is_usage_ = misused;  // the same kind of error in every process
      failure_ = fmt::format("process {} of the split run failed (its report says why)", failed);
      std::tie(failed_at_, failed_order_) = first_failure;  // the run's failure, for RunError
      aborting_ = true;
    }
    return true;
  }
  // Sends held until received whose receives completed in another process, and buffer space freed
  // there: at or after this window's end (receipt_here), when the single process has them.
  for (const Receipt& r : receipts) {
    if (r.kind == Receipt::Kind::buffer_freed) {
      network_->free_buffer_at(static_cast<int>(r.rank), r.bytes, r.at);
      continue;
    }
    const auto it = awaiting_receipt_.find(r.id);
    if (it == awaiting_receipt_.end()) throw_corrupt_swap("a receipt of no held send");
    Op* op = it->second;
    awaiting_receipt_.erase(it);
    queue_.push(r.at, r.id, Ev::received, op);
  }
  std::sort(records.begin(), records.end(), in_sequential_order);
  // Flow control: the window's undecided sends take their space in the sequential order, each after
  // the frees of buffer space the loop had made before it (await_protocol).
  std::vector<Network::Reservation> asked;
  if (machine_.net.flow_control() && machine_.net.recv_buffer >= 0)
    for (const Swapped& place : records)
      if (const auto r = Unpacker(std::span<const std::byte>(all).subspan(place.at)).take<Record>(); r.undecided)
        asked.push_back(Network::Reservation{r.frees_before, r.dst, r.size});
  const std::vector<bool> fitted = asked.empty() ? std::vector<bool>() : network_->reserve_between_frees(asked);
  std::size_t decided = 0;
  std::vector<int> fan;           // a multicast's destinations
  std::vector<std::uint32_t> vc;  // its sender's vector clock (race detection)
  for (const Swapped& place : records) {
    Unpacker at(std::span<const std::byte>(all).subspan(place.at));
    auto r = at.take<Record>();
    const bool buffered = r.undecided && fitted[decided++];
    if (r.undecided && !buffered) {  // by rendezvous: its request to send leaves, as post_send's would
      r.proto = static_cast<std::uint8_t>(Msg::Proto::rts);
      r.rendezvous = r.size;
      r.size = 0;
      r.handed = r.start + machine_.send_cost(r.src, 0);
      r.synchronous = r.held = 0;
    }
    if (r.undecided) acts = std::min(acts, r.handed);  // its VP goes on then (protocol_decided)
    if (r.undecided && r.proc == partition_->index()) protocol_decided(handed_here_[r.seq], buffered);
    std::span<const std::byte> payload =
        place.payload == Swapped::kInline ? at.first(r.bytes)
        : place.payload == Swapped::kElsewhere
            ? std::span<const std::byte>()
            : std::span<const std::byte>(received_apart).subspan(place.payload, r.bytes);
    if (r.undecided && !buffered) payload = {};  // the data's bytes travel with the data
    fan.clear();
    for (std::int32_t j = 0; j < r.fan; ++j) fan.push_back(at.take<std::int32_t>());
    vc.clear();
    if (r.clocked)
      for (std::size_t j = 0; j < vps; ++j) vc.push_back(at.take<std::uint32_t>());
    if (r.fan > 0) {  // a multicast (multicast.cpp)
      if (r.proc == partition_->index())
        hand_over_multicast(handed_here_[r.seq]);
      else
        take_multicast(HandedHere{make_msg(r.src, r.dst, r.tag, r.ctx, r.size), r.sent, r.start, r.handed}, fan,
                       payload, vc, r.held != 0);
      continue;
    }
    const auto proto = static_cast<Msg::Proto>(r.proto);
    const auto [id, data_id] = take_ids(r, next_msg_id_);
    if (r.proc == partition_->index()) {
      Msg* m = handed_here_[r.seq].m;
      number_own(*m, id, data_id);
      if (proto == Msg::Proto::rts && !here(m->dst)) rendezvous_data_[data_id] = m->rdv;  // until its clear to send
      if (!here(m->dst)) {  // its bytes are on their way to its destination's process: this copy needs none
        if (m->lender) m->lender->lent = nullptr, m->lender = nullptr, m->lent = {};
        m->payload = std::vector<std::byte>();
        if (m->sync_op) awaiting_ack_[id] = m->sync_op, m->sync_op = nullptr;  // until its acknowledgement
        if (m->held_op) awaiting_receipt_[id] = m->held_op, m->held_op = nullptr;  // until its receipt
      }
      instruments_.handed_over(*m, r.start, r.handed, handed_here_[r.seq].held);
      to_network(m, r.start, r.handed, r.sent.t);
    } else {
      // Another process's message: this copy of the network carries it; its sender's process counts
      // and hashes its set-up, and only its destination's process receives it (on_arrival).
      Msg* m = proto == Msg::Proto::rdv_data && here(r.dst) ? waiting_data(id)  // made with its request
                                                            : make_msg(r.src, r.dst, r.tag, r.ctx, r.size);
      m->id = id;
      m->buffered = buffered;  // its receive frees the space it took
      if (here(r.dst)) {
        m->payload.assign(payload.begin(), payload.end());
        m->vc = vc;
        m->synchronous = r.synchronous != 0;
        m->held_elsewhere = r.held != 0;
        take_rendezvous(*m, proto, r.rendezvous, data_id);
      }
      to_network(m, r.start, r.handed, r.sent.t);
    }
  }
  handed_here_.clear();
  instruments_.forget_held();
  multicast_dsts_.clear();
  network_->split_window_ends();
  forget_places();
  if (!queue_.empty()) next = std::min(next, queue_.next_time());
  if (next == kNever) {
    if (not_done == 0) return false;
    failure_told_ = true;
    const HeadlineFacts facts = pooled_headline_facts();  // every process is here, in the same window
    abort_run(first_process_says(deadlock_report(&facts)));
    failed_at_ = kNever;  // after every event
    return true;
  }
  // Every VP event here must be one the others counted in `acts`, or the window could end past a
  // message one of its VPs hands over.
  if (queue_.next_vp_time() < acts)
    abort_run(
        fmt::format("internal error: a VP event at t={} us that the split run's processes did not count "
                    "(please report this with the command line)",
                    to_us(queue_.next_vp_time())));
  window_end_ = kNever;
  acts_at(acts);
  return true;
}

// The window ends at the lookahead past the earliest time a VP of any process may act: its own
// events, which the processes tell each other at the window's end, and what the engine does in the
// network's events (an arrival, a send's end), which every process handles alike. Until then the
// network's events go on without the processes meeting: a long message's packets, a worm's hops.
void Engine::acts_at(Time t) {
  if (t <= kNever - lookahead_) window_end_ = std::min(window_end_, t + lookahead_);
}

// The run is stuck in every process: when (the last blocking of a rank), a receive-buffer cycle and a
// forced receive that waits in vain are seen where their ranks run; the single process's headline
// takes the latest blocking and names the first such rank's choice.
Engine::HeadlineFacts Engine::pooled_headline_facts() {
  Packed mine;
  mine.put(deadlock_stuck_at());
  mine.put(std::uint64_t{buffer_cycle()});
  mine.put_text(infeasible_choice());
  wait_graph().pack(mine);
  const BlockedLines here = blocked_lines();
  mine.put(here.ranks_blocked);
  mine.put(here.ranks.size());
  for (const std::string& line : here.ranks) mine.put_text(line);
  mine.put(here.tasks.size());
  for (const auto& [order, line] : here.tasks) mine.put(order), mine.put_text(line);
  mine.put_text(here.buffers);
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  HeadlineFacts pooled;
  pooled.waits.blocked.assign(vps_.size(), 0);
  pooled.waits.edges.resize(vps_.size());
  for (int k = 0; k < partition_->count(); ++k) {
    pooled.stuck_at = std::max(pooled.stuck_at, in.take<Time>());
    pooled.buffer_cycle |= in.take<std::uint64_t>() != 0;
    std::string forced = in.take_text();
    if (pooled.forced.empty()) pooled.forced = std::move(forced);  // in rank order, as one process looks
    pooled.waits.unpack(in);
    // The processes hold the ranks in blocks, in rank order: their lines follow one another.
    BlockedLines& lines = pooled.lines;
    lines.ranks_blocked += in.take<std::uint64_t>();
    for (auto i = in.take<std::size_t>(); i > 0; --i)
      if (std::string line = in.take_text(); lines.ranks.size() < BlockedLines::kRanksShown)
        lines.ranks.push_back(std::move(line));
    for (auto i = in.take<std::size_t>(); i > 0; --i) {
      const auto order = in.take<std::uint64_t>();
      lines.tasks.emplace_back(order, in.take_text());
    }
    lines.buffers += in.take_text();
  }
  std::sort(pooled.lines.tasks.begin(), pooled.lines.tasks.end());
  return pooled;
}

// A send's message is numbered at the window's end, after its program may have begun to wait for
// it: the wait, described at the call (deadlock reports, the trace), names the message too.
void Engine::numbered(Op& send, std::uint64_t id) {
  send.msg_id = id;
  const auto rank = static_cast<std::size_t>(send.owner);
  if (vps_[rank]->pending.op.op == &send) vps_[rank]->pending.op.msg_id = id;
  if (rank < tasks_of_.size())
    for (Vp* t : tasks_of_[rank])
      if (t->pending.op.op == &send) t->pending.op.msg_id = id;
}

// A rendezvous's message from another process's rank to one of this process's (docs/model.md 2.16):
// a request to send brings a copy of its data, which its receive completes when its bytes come; a
// clear to send goes back to the data waiting here; a synchronous send's acknowledgement to the
// send waiting here.
void Engine::take_rendezvous(Msg& m, Msg::Proto proto, std::uint64_t rendezvous, std::uint64_t data_id) {
  if (proto == Msg::Proto::rts) {
    m.rdv = make_msg(m.src, m.dst, m.tag, m.ctx, rendezvous);
    m.rdv->id = data_id;
    m.rdv->proto = Msg::Proto::rdv_data;
    m.rdv->vc = m.vc;  // the send's own vector clock, which its request carries (Engine::post_send)
    rendezvous_data_[data_id] = m.rdv;
  } else if (proto == Msg::Proto::cts) {
    m.rdv = waiting_data(rendezvous);
  } else if (proto == Msg::Proto::sync_ack) {
    const auto it = awaiting_ack_.find(rendezvous);
    if (it == awaiting_ack_.end()) throw_corrupt_swap("an acknowledgement of no send");
    m.sync_op = it->second;
    m.acked = rendezvous;
    awaiting_ack_.erase(it);
  }
  m.proto = proto;
}

// The data of a rendezvous between this process and another, which its clear to send (in the
// sender's process) or its bytes (in the receiver's) have come for.
Msg* Engine::waiting_data(std::uint64_t id) {
  const auto it = rendezvous_data_.find(id);
  if (it == rendezvous_data_.end()) throw_corrupt_swap("a rendezvous without its data");
  Msg* data = it->second;
  rendezvous_data_.erase(it);
  return data;
}

// This process's message gets its id, and a request to send its data's; so do the waits for their sends.
void Engine::number_own(Msg& m, std::uint64_t id, std::uint64_t data_id) {
  m.id = id;
  if (m.send_op) numbered(*m.send_op, id);
  if (m.proto != Msg::Proto::rts) return;
  m.rdv->id = data_id;
  if (m.rdv->send_op) numbered(*m.rdv->send_op, data_id);
}

void Engine::enter_place(Stamp at) {
  const bool ends = std::exchange(place_ends_, false);
  if (!places_.empty()) {
    Place& last = places_.back();
    if (at <= last.at) return;
    // The events of messages at one instant are one place: a failure this process can place is a
    // context's turn, which comes after all of them (a million injections at once are one), or one
    // in an active message's handler, whose request's arrival ends its place.
    if (!ends && at.t == last.at.t && at.order < vp_order(0) && last.at.order < vp_order(0)) {
      last.at = at;
      return;
    }
    // A place that changed nothing here (no hash term, no clock: most network events in a process
    // that keeps the network's terms aside) gives its slot to the next, so a window that hands a
    // million messages over does not keep a million places.
    const bool clock_noted = !clocks_noted_.empty() && clocks_noted_.back().place == first_place_ + places_.size() - 1;
    if (!clock_noted && last.hash_before == instruments_.hash().value()) {
      last.at = at;
      return;
    }
  }
  places_.push_back(Place{at, instruments_.hash().value()});
}

// A layer's mark inside v's turn (Proc::mark): the rest of the turn is a place of its own, with
// v's clock noted, so that a failure the layer finds at the window's end is cut exactly there.
std::uint32_t Engine::mark_place(Vp& v) {
  if (!partition_) return 0;
  await_turn(v);
  // Not in its own turn, or out of marks: the failure keeps the processes' shares.
  if (place_now_.t != now_ || place_now_.order != v.order || place_now_.step + 1 == Stamp::kWholeTurn) return 0;
  ++place_now_.step;
  enter_place(place_now_);
  note_clock(v);
  if (stamps_records_) instruments_.stamp(place_now_);
  return place_now_.step;
}

void Engine::forget_places() {
  first_place_ += places_.size();
  places_.clear();
  clocks_noted_.clear();
  if (stamps_records_) instruments_.window_ended();
  instruments_.network_window_ended();
  network_->forget_releases();
}

void Engine::cut_at(Stamp failure, std::span<const std::byte> all, std::span<const std::size_t> records) {
  std::vector<Record> before;  // the window's sends before the failure, in the sequential order
  std::vector<Network::Reservation> asked;  // ... those waiting for the window's frees of buffer space
  for (const std::size_t at : records) {
    const auto r = Unpacker(all.subspan(at)).take<Record>();
    if (r.sent > failure) continue;  // (a turn woken at its instant by a later key's is numbered later)
    if (r.undecided) asked.push_back(Network::Reservation{r.frees_before, r.dst, r.size});
    before.push_back(r);
  }
  // A send whose protocol waited for the window's frees of buffer space (await_protocol), decided
  // as at a window's end. Eager, its VP stood in its send at the failure in one process too (an
  // eager send's CPU time is at least the lookahead). By rendezvous, one process's VP went on after
  // its shorter request to send, which no cut gives back: the hash stays the processes' shares.
  if (!asked.empty()) {
    const std::vector<bool> fitted = network_->reserve_between_frees(asked);
    if (std::find(fitted.begin(), fitted.end(), false) != fitted.end()) return;
  }
  // What this process did past the failure: the hash's terms and the contexts' clocks it moved.
  const auto past = std::upper_bound(places_.begin(), places_.end(), failure,
                                     [](const Stamp& f, const Place& p) { return f < p.at; });
  if (past != places_.end()) {
    TraceHash& h = instruments_.hash();
    h.take_back(h.value() - past->hash_before);
    const std::uint64_t first_past = first_place_ + static_cast<std::uint64_t>(past - places_.begin());
    for (auto n = clocks_noted_.rbegin(); n != clocks_noted_.rend() && n->place >= first_past; ++n)
      context(n->index).clock = n->clock;  // the earliest note of a context is the last one taken
  }
  // The window's sends before the failure, numbered as the single process numbered them; each
  // process hashes its own.
  for (const Record& r : before) {
    if (r.proc != partition_->index()) {
      if (r.fan > 0)
        next_msg_id_ += static_cast<std::uint64_t>(r.fan);
      else
        take_ids(r, next_msg_id_);
      continue;
    }
    const HandedHere& sent = handed_here_[r.seq];
    Msg* m = sent.m;
    if (r.fan > 0) {
      number_multicast(sent);
      continue;
    }
    const auto [id, data_id] = take_ids(r, next_msg_id_);
    number_own(*m, id, data_id);
    instruments_.handed_over(*m, sent.start, sent.handed, sent.held);
  }
  cut_at_failure_ = true;
  cut_place_ = failure;
  network_->releases_back_to(failure);  // the holds still open end as known at the failure
  instruments_.cut_network(failure);
  if (stamps_records_) records_cut_at_ = failure;
}

// The rests of the programs that left (Engine::run_rests) run after the processes' last window, so a
// failure there is one process's until they compare: the first in the order the VPs left, the
// single process's, is the run's, and the other processes end with it too.
void Engine::pool_rest_failures() {
  Packed mine;
  mine.put(std::uint64_t{aborting_ ? (failure_is_usage_ ? 2U : 1U) : 0U});
  mine.put(rest_failed_at_.first);
  mine.put(rest_failed_at_.second);
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  int first = -1;
  bool usage = false;
  std::pair<Time, std::uint64_t> first_at{kNever, 0};
  for (int k = 0; k < partition_->count(); ++k) {
    const auto failed = in.take<std::uint64_t>();
    const auto t = in.take<Time>();
    const std::pair at{t, in.take<std::uint64_t>()};
    if (failed > 2) throw_corrupt_swap();
    if (failed && (first < 0 || at < first_at)) first = k, usage = failed == 2, first_at = at;
  }
  if (first < 0 || first == partition_->index()) return;
  failure_ = fmt::format("process {} of the split run failed (its report says why)", first);
  failure_is_usage_ = usage;
  aborting_ = true;
  failed_at_ = kNever;
}

// What the run left behind (Engine::leftovers), found by each process at its own ranks: every
// process's, so that every one reports it in the single process's words, and fails if any process
// found something. Processes hold ranks in order, so their parts in the order of the processes are
// in rank order: the first kShown messages never received are those of the first processes.
void Engine::pool_leftovers(Leftovers& found) {
  Packed mine;
  mine.put(found.unreceived_count);
  mine.put(found.unreceived.size());
  for (const std::string& line : found.unreceived) mine.put_text(line);
  for (const auto* lines : {&found.misuse, &found.held}) {
    mine.put(lines->size());
    for (const RankedLine& line : *lines) {
      mine.put(line.t);
      mine.put(line.rank);
      mine.put_text(line.text);
    }
  }
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  found = Leftovers();
  for (int k = 0; k < partition_->count(); ++k) {
    found.unreceived_count += in.take<std::uint64_t>();
    for (auto n = in.take<std::size_t>(); n > 0; --n) {
      std::string line = in.take_text();
      if (found.unreceived.size() < Leftovers::kShown) found.unreceived.push_back(std::move(line));
    }
    for (auto* lines : {&found.misuse, &found.held})
      for (auto n = in.take<std::size_t>(); n > 0; --n) {
        const auto t = in.take<Time>();
        const auto rank = in.take<int>();
        lines->push_back({t, rank, in.take_text()});
      }
  }
  if (!in.empty()) throw_corrupt_swap("a corrupt report of what the run left behind");
}

// This process failed in the middle of a window: it takes part in the window's swap once more, so
// that the others hear of it there and end too, instead of waiting for it.
void Engine::announce_failure() {
  failure_told_ = true;
  at_window_end();  // which also finds whether another process failed before, in the sequential order
}

// The run's end, when a schedule was replayed (RunOptions::schedule): each process forced the
// wildcards of its own ranks, so the entries used are every process's together; returns whether the
// run ended without a failure in every process (only then are unused entries an error, as in one).
bool Engine::gather_schedule_use(bool clean) {
  Packed mine;
  forced_.share_used(mine);
  mine.put(std::uint64_t{clean});
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  for (int k = 0; k < partition_->count(); ++k) {
    forced_.take_used(in);
    clean &= in.take<std::uint64_t>() != 0;
  }
  return clean;
}

// The run's end: every process's clocks, so that the hash's clock terms are added once (by the
// first process: Engine::run).
void Engine::gather_clocks(std::vector<Time>& clocks) {
  Packed mine;
  for (int r = first_here_; r < end_here_; ++r) mine.put(clocks[static_cast<std::size_t>(r)]);
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  if (all.size() != clocks.size() * sizeof(Time))
    throw RunError("a split run's processes disagree on the machine's size");
  std::memcpy(clocks.data(), all.data(), all.size());
}

// ... and, for a trace or an order log, every process's records of its own ranks, which process 0
// writes (Recorder::share): the network's records are the same in every process, and process 0
// keeps its own. After a failure each process adds the messages its ranks left unreceived, and the
// files hold what the processes ran, up to where the last of them stopped.
void Engine::gather_evidence() {
  // After a failure cut exactly, the records are the single process's up to it (Recorder::cut),
  // and so are the clocks (cut_at).
  evidence_upto_ = records_cut_at_ ? records_cut_at_->t : now_;
  if (aborting_) record_unreceived();
  if (records_cut_at_) instruments_.cut_records(*records_cut_at_);
  Packed share;
  if (partition_->index() != 0) instruments_.share_records(share);
  Packed mine;
  mine.put(evidence_upto_);
  mine.put_bytes(share.bytes);
  share = Packed();
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  for (int k = 0; k < partition_->count(); ++k) {
    evidence_upto_ = std::max(evidence_upto_, in.take<Time>());
    Unpacker records(in.take_bytes());
    if (k != 0 && partition_->index() == 0) instruments_.merge_records(records);  // only process 0 writes
  }
  evidence_gathered_ = true;
}

// ... and, with race detection, the races found at every process's ranks, each described in the
// program's terms by its own process (RunOptions::describe_race), so that every process ends with
// the single process's list; and the digests of the data each rank received. After a failure each
// process found them up to where it stopped, as its trace records do.
void Engine::gather_races() {
  Packed mine;
  instruments_.share_races(mine, first_here_, end_here_);
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();
  Unpacker in(all);
  std::vector<Race> races;
  for (int k = 0; k < partition_->count(); ++k) {
    const auto [first, end] = Partition::ranks_of(k, partition_->count(), machine_.nodes());
    instruments_.take_races(in, first, end, races);
  }
  instruments_.adopt_races(std::move(races));
}

// ... then every process's hash terms, statistics and messages sent, so that every process ends
// with the whole run's, as the single process would.
void Engine::combine_counts() {
  RunStats& st = instruments_.stats();
  std::vector<std::uint64_t>& sent = instruments_.sent();
  Packed mine;
  const std::uint64_t start = TraceHash().value();  // the hash of a run with no terms yet
  mine.put(instruments_.hash().value() - start);
  for (const std::uint64_t x : {st.messages, st.packets, st.payload_bytes, st.blocked_headers, st.events}) mine.put(x);
  mine.put(st.blocked_time);
  for (int r = first_here_; r < end_here_; ++r) mine.put(sent[static_cast<std::size_t>(r)]);
  const std::vector<std::byte> all = partition_->all_gather(mine.bytes);
  mine = Packed();  // its bytes are in `all` now
  Unpacker in(all);
  RunStats sum;  // batches: each process saw only its own VPs' instants, so none are counted
  std::uint64_t hash = start;
  const int n = machine_.nodes(), parts = partition_->count();
  for (int k = 0; k < parts; ++k) {
    hash += in.take<std::uint64_t>();
    sum.messages += in.take<std::uint64_t>();
    sum.packets += in.take<std::uint64_t>();
    sum.payload_bytes += in.take<std::uint64_t>();
    sum.blocked_headers += in.take<std::uint64_t>();
    sum.events += in.take<std::uint64_t>();
    sum.blocked_time += in.take<Time>();
    const auto [first, end] = Partition::ranks_of(k, parts, n);
    for (int r = first; r < end; ++r) sent[static_cast<std::size_t>(r)] = in.take<std::uint64_t>();
  }
  instruments_.hash().add_sum(hash - instruments_.hash().value());
  st = sum;
}

}  // namespace touchstone::detail
