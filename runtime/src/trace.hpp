// Recording a run for people: Chrome Trace Event JSON (Perfetto opens it) and a plain-text
// per-VP message order log (docs/cli.md). Only built when a run asks for one of them.
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "touchstone/packed.hpp"
#include "touchstone/time.hpp"

namespace touchstone::detail {

/// What a failed run's trace hash is of: the run up to the failure, or in a run split over
/// processes that failed inside a window (`shares`), the sum of what each process ran up to where
/// it stopped, which is not the single process's hash (docs/parallel.md, "Failures").
inline const char* failed_hash_of(bool shares) {
  return shares ? "the processes' shares of the run, each up to where it stopped" : "the run up to the failure";
}

/// Where a record falls in the sequential order: the time and order key (model.md 1.3) of the event
/// or turn that made it. A run that records stamps its records, so that after a failure it can take
/// back what it recorded past the failure in that order (Recorder::cut): what a split run's processes
/// ran to their window's end, or the completions an instant made ahead of its turns on several host
/// cores (docs/parallel.md).
struct Stamp {
  Time t = 0;
  std::uint64_t order = 0;
  /// The part of its turn: a layer's mark (Proc::mark) begins the next part, so that a failure the
  /// layer finds only at a split run's window's end cuts the turn at its call (WindowFailure::mark).
  std::uint32_t step = 0;
  auto operator<=>(const Stamp&) const = default;
  static constexpr std::uint32_t kWholeTurn = ~std::uint32_t{0};                    // every part of its turn
  static constexpr Stamp end() { return {kNever, ~std::uint64_t{0}, kWholeTurn}; }  // after every event
};

class Recorder {
 public:
  explicit Recorder(int vps);
  /// The place of the records made from now on.
  void stamp(Stamp now) { now_ = now; }
  /// A span on a VP's track: "send", "recv", "compute", "blocked", "barrier".
  void span(int rank, const char* name, Time start, Time end, std::string detail = {});
  /// A VP blocked in `call` from `since` (its call at the place `began`) until `end`, and `more` on
  /// how the wait ended. Recorded when it ends (at_end: the failed run unwinds it); a wait that took
  /// no time is only kept where a cut leaves its VP blocked at the failure.
  void blocked(int rank, Time since, Time end, std::string call, const std::string& more, Stamp began,
               bool at_end = false);
  /// A message a receive took from the messages waiting at its destination (a split run's, whose
  /// receives may be past a failure): were the receive past it, the message was unreceived there.
  void took_waiting(std::uint64_t id, int dst, Stamp arrived) {
    if (stamping_) taken_.push_back(Taken{now_, id, dst, arrived});
  }
  /// Records are stamped from now on.
  void stamp_records() { stamping_ = true; }
  bool stamping() const { return stamping_; }
  /// A window ended without a failure: what its receives took matters no more.
  void window_ended() { taken_.clear(); }
  /// After a failure at `failure` (a context's turn, or a time limit before its instant's events):
  /// takes back what was recorded past the failure, so that the records are the sequential run's up
  /// to it.
  /// Waits its VPs were still in at the failure end there, as the single process's unwinding ends
  /// them; a message a receive past the failure took is unreceived if it had arrived. The network's
  /// spans opened past the failure go; one that ended past it keeps its end.
  void cut(Stamp failure);
  /// A send span; `from_handler`: an active-message reply, on the handler track of its sender (it
  /// lies inside the handler's span, not in the VP's code).
  /// What a sent message is to the program (docs/model.md 2.16): its own message, or one of the
  /// rendezvous protocol's. The request to send is the program's send as the program made it (the
  /// data's id and size, in program order); the clear to send and the data are the protocol's, in
  /// the trace only (the data with the arrow to its receive), never in the order log.
  enum class Wire : std::uint8_t { message, rendezvous_request, clear_to_send, rendezvous_data, acknowledgement };
  /// Where a send's records go in its VP's records. A split run numbers a window's messages at the
  /// window's end (partition.cpp), after its VPs have gone on: `hold` keeps each send's places from
  /// the send on, and `sent` fills them once it is numbered, so every VP's records are in the order
  /// the single process makes them. A place never filled (a failed run) is left out of the files.
  struct Place {
    static constexpr std::size_t none = ~std::size_t{0};
    std::size_t span = none, line = none;
  };
  Place hold(int src, bool from_handler, Wire wire);
  void sent(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time start, Time end,
            bool from_handler = false, Wire wire = Wire::message, const Place* at = nullptr);
  void received(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time arrival, Time start, Time end);
  /// An active-message handler ran for message `id` on rank's handler track.
  void handled(std::uint64_t id, int rank, Time start, Time end, std::string detail);
  /// A message that arrived and was never received (a failed run): its arrow ends on the
  /// destination's track at its arrival.
  void unreceived(std::uint64_t id, int dst, Stamp arrived);
  /// Who blocked whom (runtime/src/blame.hpp): a span on a network track (a channel's holds, the
  /// waits for a resource), open from `start` until end_network_span. Tracks are ordered by their
  /// key; spans of one track that overlap go on lanes of their own ("name", "name (2)", ...).
  std::size_t network_span(std::uint64_t track, const std::string& track_name, std::string name, Time start);
  void end_network_span(std::size_t span, Time end, std::string detail);
  /// A flow arrow ("blocked by") from one network span (the blocker's) to another (the wait).
  void arrow(std::size_t from, std::size_t to);
  /// Writes whichever files have a non-empty path, each naming the run's trace hash (`failed`: of
  /// the run up to its failure; `shares`: of the processes' shares, failed_hash_of). Throws
  /// UsageError if a file cannot be written.
  void write(const std::string& chrome_path, const std::string& order_path, const std::string& machine,
             std::uint64_t trace_hash, bool failed, bool shares = false) const;

  /// A split run (docs/parallel.md, "Several processes"): each process records its own ranks (their
  /// spans, sends, receives and order-log lines) and the network as every process sees it. `share`
  /// packs the ranks' part; `merge` adds another process's, so that one process writes the files
  /// the single process writes.
  void share(Packed& out) const;
  void merge(Unpacker& in);

 private:
  enum Track : int { vp = 1, handler = 2, network = 3, never_received = 4 };  // Chrome trace process ids (from 1)
  struct Span {
    Track track;
    int rank;
    const char* name;
    Time start, end;
    std::string detail;
    Stamp at{};             // where it was recorded
    Stamp began{};          // a wait ("blocked"): where its call was made
    std::size_t call = 0;   // ... and the length of the call's description that begins `detail`
    std::uint64_t msg = 0;  // an unreceived message: its id, which orders the ones of an instant
  };
  struct NetSpan {
    std::uint64_t track;
    std::string name;
    Time start, end;
    std::string detail;
    Stamp opened{};
  };
  struct Arrow {
    std::size_t from, to;
    Stamp at{};
  };
  struct Flow {
    std::uint64_t id;
    int src, dst;
    Time sent, received;  // where the arrow starts and ends: inside the send and receive spans
    Track end_track;
    Track start_track = vp;
    Stamp ended{};  // where its end was recorded
  };
  // Where a message's arrow ends, recorded where its send's flow is not (another process's send).
  struct FlowEnd {
    std::uint64_t id;
    Time at;
    Track track;
    Stamp recorded{};
  };
  struct Line {
    std::string text;  // empty: a place held for a send never numbered, or taken back by a cut
    Stamp at{};
  };
  struct Taken {
    Stamp at;
    std::uint64_t id;
    int dst;
    Stamp arrived;
  };
  void add_flow(const Flow& f);
  void end_flow(std::uint64_t id, Time t, Track track, Stamp at);
  const char* name_of(const std::string& name);
  std::vector<Span> spans_;
  std::vector<Flow> flows_;
  std::vector<std::uint64_t> flow_index_;  // message id -> index in flows_ + 1
  std::vector<FlowEnd> loose_ends_;        // ends whose flow is not (yet) here
  std::set<std::string> names_;            // span names taken from other processes' shares
  std::vector<std::vector<Line>> order_;
  bool stamping_ = false;
  Stamp now_{};
  std::vector<Taken> taken_;  // took_waiting's in the current window
  std::vector<NetSpan> net_spans_;
  std::vector<Arrow> arrows_;
  std::map<std::uint64_t, std::string> net_tracks_;  // network tracks: key -> name
  void write_network(const std::function<void(const nlohmann::json&)>& emit) const;
};

}  // namespace touchstone::detail
