// The engine's instruments behind one door: the trace hash, the run's statistics, the recorder
// (trace and order log), the race detector, who blocked whom (Blame) and the digest of the data
// each VP received. The engine tells the hub once per event -- a message handed over, a match, a
// completed receive, a wait that ended -- and the hub feeds whichever instruments the run asked
// for; the network's twin is ChannelObserver (network.hpp), through which Blame hears the network.
//
// Not an observer interface with one virtual call per instrument per event: the trace hash and the
// statistics are kept on every run and cost a few instructions per event, so the hub is a concrete
// class whose per-event calls are inline and test each optional instrument with one pointer check.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blame.hpp"
#include "describe.hpp"
#include "event_queue.hpp"
#include "network.hpp"
#include "op.hpp"
#include "races.hpp"
#include "touchstone/run.hpp"
#include "trace.hpp"

namespace touchstone::detail {

/// The place of m's arrival, for a failure's cut: its event's place among those of its instant.
inline Stamp arrived_at(const Msg& m) { return Stamp{m.arrival, m.arrival_order}; }

class Instruments {
 public:
  Instruments(int nodes, const RunOptions& options);
  /// Blame hears the network (traces and RunOptions::explain): called once the network exists.
  void watch(Network& network);
  /// The network adds its own terms and counts (Network's constructor takes them).
  TraceHash& hash() { return hash_; }
  RunStats& stats() { return stats_; }
  const RunStats& stats() const { return stats_; }
  std::vector<std::uint64_t>& sent() { return sent_; }  // RunResult::sent, per rank
  bool recording() const { return recorder_ != nullptr; }
  /// Records and races carry their places in the sequential order (Recorder::cut,
  /// RaceDetector::cut), where the run records or detects races.
  bool stamps() const { return recorder_ || races_; }
  void stamp_records() {
    if (recorder_) recorder_->stamp_records();
    if (races_) races_->stamp_records();
  }
  void stamp(Stamp now) {
    if (recorder_) recorder_->stamp(now);
    if (races_) races_->stamp(now);
    stamped_ = now;
  }
  Stamp stamped() const { return stamped_; }
  /// A run that failed at `failure`: what this process recorded past it goes (its races go at
  /// races_at_end).
  void cut_records(Stamp failure) {
    if (recorder_) recorder_->cut(failure);
  }
  void window_ended() {  // ... and one that ended without a failure
    if (recorder_) recorder_->window_ended();
    if (races_) races_->window_ended();
  }
  /// Who blocked whom in a split run, whose processes go on past a failure to their window's end:
  /// what it noted past the failure is taken back (Blame::cut), `place` being the event loop's.
  bool journal_network(const Stamp* place) {
    if (blame_) blame_->keep_journal(place);
    return blame_ != nullptr;
  }
  void network_window_ended() {
    if (blame_) blame_->forget_journal();
  }
  void cut_network(Stamp failure) {
    if (blame_) blame_->cut(failure);
  }

  // ---- the events, in the order of a message's way
  /// The event loop commits an event.
  void event() { ++stats_.events; }
  /// A VP resumes at `now`: one more in this instant's batch, or the first of a new instant.
  void resumed(Time now) {
    BatchStats& b = stats_.batches;
    ++b.segments;
    if (batch_width_ && now == batch_time_) {
      ++batch_width_;
      return;
    }
    close_batch();
    batch_time_ = now;
    batch_width_ = 1;
  }
  /// VP `rank` posts a send of m (the program's send: for a rendezvous, its data message).
  void send_posted(int rank, Msg& m) {
    if (races_) races_->on_send(rank, m);
  }
  /// A message set-up of node m.src that began at `start` is handed to the network; the sender's
  /// CPU is busy with it until `handed` (before the send's tail is taken off).
  /// `held`: where hold_sent kept its records' places (a split run), or kNotHeld.
  void handed_over(const Msg& m, Time start, Time handed, std::size_t held = kNotHeld) {
    // Control messages and rendezvous data hash apart from eager messages (whose hash is unchanged).
    const std::uint64_t proto = static_cast<std::uint64_t>(m.proto) * 0x9e3779b9ULL;
    hash_.add(m.id, static_cast<std::uint64_t>(m.src) << 32 | static_cast<std::uint32_t>(m.dst),
              (static_cast<std::uint64_t>(start) ^ (m.ctx * 31 + static_cast<std::uint64_t>(m.tag)) ^ (m.size << 40)) +
                  proto);
    ++stats_.messages;
    ++sent_[static_cast<std::size_t>(m.src)];
    stats_.payload_bytes += m.size;
    if (recorder_) record_sent(m, start, handed, held);
  }
  static constexpr std::size_t kNotHeld = ~std::size_t{0};
  /// A split run hands its messages over at the window's end, numbered (partition.cpp): the places
  /// of a send's records, among its VP's, are kept from the send on (Recorder::hold), one for each
  /// branch of a multicast. kNotHeld when nothing is recorded.
  std::size_t hold_sent(const Msg& m);
  std::size_t hold_multicast(int rank, const Msg& lead);
  /// The window's sends are all recorded: their places are forgotten.
  void forget_held() { held_.clear(); }
  /// VP `rank` sent a multicast: one set-up from `start` to `end` for every branch of `lead`.
  /// `by_task`: sent from a task context, whose sends RunResult::sent does not count.
  void multicast_sent(int rank, Msg& lead, Time start, Time end, bool by_task, std::size_t held = kNotHeld);
  /// The receiver of the request to send `rts` sends its clear to send at `at`.
  void cleared_to_send(const Msg& rts, Time at) { hash_.add(rts.id, 0xc75, static_cast<std::uint64_t>(at)); }
  /// The receive or probe `op` of VP `rank` is matched to m (posted with m waiting, or on arrival).
  void matched(int rank, Op& op, const Msg& m, const std::string& label) {
    if (races_) races_->on_match(rank, op, m, label);
  }
  /// ... the receive took m from the messages waiting at its VP.
  void took_waiting(const Msg& m) {
    if (recorder_) recorder_->took_waiting(m.id, m.dst, arrived_at(m));
    if (races_) races_->took_waiting(m.dst, m);
  }
  /// m's bytes went into the receive matched on its arrival (or its rendezvous data arrived) at t.
  void delivered(const Msg& m, Time t) { hash_.add(m.id, 0x3a7c, static_cast<std::uint64_t>(t)); }
  /// VP `rank` completes the receive `op` with m: its CPU worked on it from `start` to `end`.
  void received(int rank, const Op& op, const Msg& m, Time start, Time end) {
    if (races_) race_received(rank, op, m);
    hash_.add(m.id, 0x5ec, static_cast<std::uint64_t>(end));
    if (recorder_) recorder_->received(m.id, m.src, rank, m.tag, m.size, m.arrival, start, end);
  }
  /// A probe of VP `rank` found m.
  void probed(int rank, Op& pattern, const Msg& m, const std::string& label) {
    if (races_) races_->on_probe(rank, pattern, m, label);
  }
  /// VP `rank` withdrew its receive number `call` at `clock` (Proc::cancel).
  void cancelled(std::uint64_t call, int rank, Time clock) {
    hash_.add(call, 0xca9c, static_cast<std::uint64_t>(clock) ^ static_cast<std::uint64_t>(rank) << 48);
  }
  /// The handler of the active-message request m starts on its destination's behalf.
  void handler_starts(const Msg& m) {
    if (races_) races_->on_handler(m.dst, m);
  }
  /// ... and ran from `start` to `end`; `name()` names the handler (asked only when recording).
  template <class Name>
  void handled(const Msg& m, Time start, Time end, Name&& name) {
    hash_.add(m.id, 0xa3, static_cast<std::uint64_t>(end));
    if (recorder_) recorder_->handled(m.id, m.dst, start, end, name());
  }
  /// VP `rank` spawned a task at `clock` whose groups have context `ctx`.
  void spawned(int rank, Time clock, std::uint64_t ctx) {
    hash_.add(0x7a5c, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(clock) ^ ctx << 40);
  }
  /// VP `rank` started VP `started` (Proc::start) at `clock`.
  void started(int rank, int started, Time clock) {
    hash_.add(0x57a7, static_cast<std::uint64_t>(rank),
              static_cast<std::uint64_t>(clock) ^ std::uint64_t(started) << 40);
  }
  /// VP `rank` computed from `start` for `dt`.
  void computed(int rank, Time start, Time dt) {
    if (recorder_ && dt > 0) recorder_->span(rank, "compute", start, start + dt);
  }
  /// VP `rank` arrives at a hardware barrier: what it has heard of joins the barrier's vector clock.
  void barrier_arrived(int rank, std::vector<std::uint32_t>& heard) const {
    if (races_) races_->heard_by(rank, heard);
  }
  /// The last member arrived: the `members` (in a split run, this process's) leaving it have heard
  /// of everyone's past up to their arrival, the barrier's vector clock `heard`.
  void barrier_released(std::span<const int> members, const std::vector<std::uint32_t>& heard) {
    if (races_) races_->on_barrier(members, heard);
  }
  bool detects_races() const { return races_ != nullptr; }
  /// VP `rank` was in a barrier from `start` to `end`.
  void barrier_passed(int rank, Time start, Time end) {
    if (recorder_) recorder_->span(rank, "barrier", start, end);
  }
  /// VP `rank`, blocked since `since` in `what` (called at the place `began`), goes on at `clock`;
  /// `waited`: the operations it waited for (a matched receive names the message that ended the wait).
  void woke(int rank, Time since, Time clock, const Call& what, const WaitList& waited, Stamp began) {
    // A wait of no length is shown only where a cut may leave its VP in it.
    if (recorder_ && (clock > since || recorder_->stamping())) record_wait(rank, since, clock, what, waited, began);
  }
  /// VP `rank`, blocked since `since` in `what`, is unwound by a failed run at `now`.
  void unwound(int rank, Time since, Time now, const Call& what, Stamp began);

  // ---- the run's end
  /// Before any ending: the messages still unreceived at each VP are races' alternatives too, and
  /// `on_races` (RunOptions::on_races) gets every race, forced ones included, so that exploring goes
  /// on from failed runs too.
  /// `cut`: the run failed there, and found things past it (RaceDetector::cut).
  void races_at_end(const std::vector<VpPtr>& vps, const std::function<void(const std::vector<Race>&)>& on_races,
                    std::optional<Stamp> cut = {}) {
    if (!races_) return;
    if (cut)
      races_->cut(*cut, vps);
    else
      races_->on_run_end(vps);
    if (on_races) on_races(races_->races(true));
  }
  /// Waits still open end at `now`; every VP's final clock ends the hash.
  void run_ended(Time now, std::span<const Time> clocks);
  /// Adds to a failed run's report what the instruments know: who blocked whom (--explain), the
  /// races up to the failure (unless `races` is false), and the trace hash of the run up to it
  /// (returned); `shares`: a split run's sum of what each process ran, which is not the single
  /// process's hash (a failure inside a window).
  std::uint64_t add_to_failure(std::string& report, bool shares, bool races = true) const;
  /// The figures of a run that succeeded: statistics, messages sent, trace hash, explanation, races.
  void fill(RunResult& res);
  /// A message that arrived and was never received, for the evidence of a failed run.
  void unreceived(const Msg& m) { recorder_->unreceived(m.id, m.dst, arrived_at(m)); }
  /// Writes the trace and order log the run asked for (`failed`: up to the failure at `upto`; `shares`
  /// as add_to_failure's), with a note for the failure report; a failed run whose files cannot be
  /// written says so instead. `ran_on`: a split run's processes ran on past a failure that could not
  /// be cut exactly, and the files hold what they recorded up to where they stopped.
  std::string write_evidence(bool failed, const std::string& machine, Time upto, bool ran_on = false,
                             bool shares = false) const;
  /// A split run: this process's share of the records (Recorder::share), and another's added here.
  void share_records(Packed& out) const { recorder_->share(out); }
  void merge_records(Unpacker& in) { recorder_->merge(in); }
  /// ... and, with race detection, the races found at the ranks [first, end) and the digests of the
  /// data they received; every process's, taken in rank order, replace this one's.
  void share_races(Packed& out, int first, int end) const;
  void take_races(Unpacker& in, int first, int end, std::vector<Race>& into);
  void adopt_races(std::vector<Race> all) { races_->adopt(std::move(all)); }

 private:
  void close_batch();
  void record_sent(const Msg& m, Time start, Time handed, std::size_t held);
  void record_wait(int rank, Time since, Time clock, const Call& what, const WaitList& waited, Stamp began);
  void race_received(int rank, const Op& op, const Msg& m);
  /// Races with their paragraphs in the program's terms (RunOptions::describe_race), where it gives one.
  std::vector<Race> described(std::vector<Race> races) const;

  std::string trace_file_, order_log_file_;
  bool explain_ = false;
  bool phantom_payloads_ = false;
  std::function<std::string(const Race&)> describe_race_;  // RunOptions::describe_race
  TraceHash hash_;
  RunStats stats_;
  Time batch_time_ = 0;            // the virtual time of the VPs resumed last (stats_.batches)
  std::uint64_t batch_width_ = 0;  // how many resumed at batch_time_ so far; 0 before the first
  std::vector<std::uint64_t> sent_;  // per rank: messages its own VP has sent (message set-ups)
  std::unique_ptr<Recorder> recorder_;
  std::vector<Recorder::Place> held_;    // hold_sent's places, until the window's end numbers them
  std::unique_ptr<RaceDetector> races_;  // RunOptions::races
  Stamp stamped_{};                      // stamp's
  std::unique_ptr<Blame> blame_;         // traces and RunOptions::explain: who blocked whom
  std::vector<std::uint64_t> received_;  // RunOptions::races: per VP, digest of the data received
};

}  // namespace touchstone::detail
