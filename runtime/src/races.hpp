// Race detection for wildcard receives and probes (RunOptions::races; docs/debugging.md).
//
// Happens-before over messages by vector clocks: each VP counts its own events (a send, the
// completion of a receive, a probe that finds a message) and every message carries its sender's
// vector. A message m' is causally after a receive R at VP d when m'.vc[d] >= the index of R's
// completion at d: its sender had heard (through some chain of messages) that R was done.
//
// For every receive or probe with any_source or any_tag, R, the detector keeps a record. Each
// later message m' matched at the same VP by a receive posted after R is an alternative of R
// when it fits R's pattern (same group, source and tag accepted), comes from another source than
// R's own match (a pair's messages do not overtake), is the first such message from its source,
// and is not causally after R. Its margin is the virtual time by which it lost: its arrival minus
// the arrival of the message R took. A message that is never received (left in the mailbox when
// the run ends, as when the run deadlocks) is an alternative on the same terms: the race whose
// other outcome is a deadlock names it. A receive whose match the schedule forced (RunOptions::
// schedule) is a wildcard too; races(true) lists it even without alternatives, because exploring
// orders the forced choices by when they were decided (explore.cpp). Internal to the runtime.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "touchstone/packed.hpp"
#include "touchstone/run.hpp"
#include "trace.hpp"
#include "vp_ptr.hpp"

namespace touchstone::detail {

struct Msg;
struct Vp;
struct Op;

class RaceDetector {
 public:
  explicit RaceDetector(int vps);

  /// VP `src` sends m: a new event of src, whose vector m carries.
  void on_send(int src, Msg& m);
  /// A receive or probe `op` of VP `dst` is matched to m (at the match, before completion).
  /// Checks m against dst's earlier wildcard records and opens one for op if it is a wildcard.
  void on_match(int dst, Op& op, const Msg& m, const std::string& label);
  /// The receive `op` of VP `dst` completes with m: a new event of dst that has heard of m's past.
  void on_complete(int dst, const Op& op, const Msg& m);
  /// A probe found m: the probe's record is complete at once (a probe is an event of dst).
  void on_probe(int dst, Op& probe, const Msg& m, const std::string& label);
  /// The handler of an active-message request runs on dst's behalf: dst hears of m's past.
  void on_handler(int dst, const Msg& m);
  /// Everyone leaving a hardware barrier has heard of everyone's past up to their arrival: `heard`,
  /// the members' vector clocks merged as each arrived (heard_by). Not of what a member heard while
  /// it waited there (a handler's or a task's message): that came after its arrival.
  void on_barrier(std::span<const int> members, const std::vector<std::uint32_t>& heard);
  /// What VP `rank` has heard of, merged into `into` (a vector clock, one entry per VP).
  void heard_by(int rank, std::vector<std::uint32_t>& into) const;
  /// The run ended: the messages still unreceived at each VP are alternatives too.
  void on_run_end(const std::vector<VpPtr>& vps);

  /// As the trace's records (Recorder::cut): what the detector finds is stamped with the place it was
  /// found at (`stamp`), and in a split run a receive that takes a message waiting at its VP says so
  /// (took_waiting), until the window ends without a failure (window_ended).
  void stamp_records() { stamping_ = true; }
  void stamp(Stamp now) { now_ = now; }
  void took_waiting(int dst, const Msg& m);
  void window_ended() { taken_.clear(); }
  /// The run failed at `failure` (inside a split run's window, or at a turn of an instant whose
  /// completions ran ahead) and ends here: what was found past the failure goes, and the messages unreceived at the
  /// failure are alternatives (on_run_end's): those still waiting at `vps` that had arrived by then, and those a
  /// receive past it took.
  void cut(Stamp failure, const std::vector<VpPtr>& vps);

  /// The races found, each with at least one alternative, ordered by (rank, call); `with_forced`:
  /// also the forced matches without one.
  std::vector<Race> races(bool with_forced = false) const;
  /// A split run's races: every process's, gathered in rank order, replace those found here.
  void adopt(std::vector<Race> all) { gathered_ = std::move(all); }
  /// A race packed for the swap between a split run's processes, and taken back.
  static void put(Packed& out, const Race& r);
  static Race take(Unpacker& in);

 private:
  struct Record {
    std::uint64_t call = 0;  // the wildcard's call number at its VP
    int src = 0, tag = 0;    // its pattern (world rank or any_source, tag or any_tag)
    std::uint64_t ctx = 0;
    std::uint32_t done = ~0U;  // the VP's event index of its completion (~0: not yet complete)
    Race race;
    Stamp opened{};               // where it was opened
    std::vector<Stamp> found_at;  // ... and where each of race.alternatives was found
  };
  // What an alternative needs of a message.
  struct Seen {
    std::uint64_t id;       // the message's own (a request to send's, for a rendezvous)
    std::uint64_t message;  // the id the program knows (user_id)
    int src, tag;
    std::uint64_t ctx;
    Time arrival;
    std::uint64_t arrival_order;  // Msg::arrival_order
    std::span<const std::uint32_t> vc;
    Stamp arrived_at() const { return Stamp{arrival, arrival_order}; }  // as the Msg's (instruments.hpp)
  };
  static Seen seen(const Msg& m);
  static void merge(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from);
  /// m, matched by the receive `before_call` of dst (unreceived: no bound), against dst's records.
  void add_alternative(int dst, const Seen& m, std::uint64_t before_call);
  static std::uint64_t user_id(const Msg& m);
  std::vector<std::vector<std::uint32_t>> vc_;
  std::vector<std::vector<Record>> records_;  // per VP, in call order
  bool stamping_ = false;
  Stamp now_{};
  struct Taken {
    Stamp at;
    int dst;
    Seen m;
    std::vector<std::uint32_t> vc;  // m.vc's own copy
  };
  std::vector<Taken> taken_;
  std::optional<std::vector<Race>> gathered_;  // adopt()
};

}  // namespace touchstone::detail
