// The network model (docs/model.md 2.3): messages cut into packets, packets travelling as wormhole worms
// over injection channel, links and ejection channel. Internal to the runtime.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "event_queue.hpp"
#include "pool.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/run.hpp"
#include "trace.hpp"

namespace touchstone::detail {

struct Op;

/// One message from the moment it is handed to the network until it is received.
struct Msg {
  std::uint64_t id = 0;
  int src = 0, dst = 0, tag = 0;
  std::uint64_t ctx = 0;
  std::size_t size = 0;
  /// The bytes: the sender's own buffer while it lends it (`lender` set: the send is not complete,
  /// so its buffer may not change), else the message's copy (`payload`; empty for phantom payloads).
  /// They move into the receive buffer at the match (Engine::deliver, docs/model.md 1.5).
  std::vector<std::byte> payload;
  std::span<const std::byte> lent;
  Op* lender = nullptr;
  std::span<const std::byte> bytes() const { return lender ? lent : std::span<const std::byte>(payload); }
  Time handed = 0;                 // handed to the network (after the sender's overhead)
  Time arrival = kNever;           // last packet arrived
  /// ... and its arrival's place among the events of that instant (Stamp::order), where records
  /// are stamped or the run is split: a failure in a network event of the same instant may come
  /// before it (Recorder::cut, RaceDetector::cut).
  std::uint64_t arrival_order = 0;
  /// Receive overlap (docs/model.md 2.15): when a receiver that started draining at -infinity would
  /// have drained every packet arrived so far, D = max(D, tail_k) + r_p + payload_k * r per packet.
  Time drained = 0;
  /// Send overlap (docs/model.md 2.15): packet k may not start before ready_k = send_base +
  /// (k+1)*s_p + min(L, (k+1)*P)*s, the time the sender's CPU has written it; kNever: no overlap.
  Time send_base = kNever;
  std::uint32_t packets = 0;
  std::uint32_t next_packet = 0;   // next packet to start on the injection port
  std::vector<std::uint32_t> path; // channel ids: injection, links (laid out at its start); ejection per packet
  Time byte_time = 0;              // bottleneck time per byte along the path
  Op* send_op = nullptr;
  /// A synchronous send's message (docs/model.md 2.5): its match sends an acknowledgement back
  /// (Proto::sync_ack), at whose arrival the send `sync_op` completes (the sender's own process
  /// holds it: in a split run's other processes it is null, and an acknowledgement names the
  /// message it acknowledges by `acked`).
  bool synchronous = false;
  /// A split run's copy, in its receiver's process, of a message whose send is held until its
  /// receive completes (held_op lives in the sender's process): the completion is told there.
  bool held_elsewhere = false;
  Op* sync_op = nullptr;
  std::uint64_t acked = 0;
  Op* held_op = nullptr;           // a send held until this message's receive completes (send_holds_until_received)
  std::vector<std::uint32_t> vc;   // RunOptions::races: the sender's vector clock (runtime/src/races.hpp)
  std::uint32_t examined = 0;      // receive-queue entries examined on arrival (docs/model.md 2.5)
  std::uint32_t resumed = 0;       // packets matched again at the destination (demux per packet, 2.18)
  /// Flow control (docs/model.md 2.16). A request to send (rts) carries the envelope and points to
  /// its data message (`rdv`, not yet in the network); a clear to send (cts) goes back to the
  /// sender and points to the same data message; the data (rdv_data) knows its receive (`rdv_recv`).
  /// A synchronous send's acknowledgement (sync_ack) goes back to its sender once matched.
  enum class Proto : std::uint8_t { eager, rts, cts, rdv_data, sync_ack };
  Proto proto = Proto::eager;
  Msg* rdv = nullptr;
  Op* rdv_recv = nullptr;
  bool buffered = false;           // holds receive-buffer space at dst until received (2.7, 2.16)
  std::size_t envelope_size() const { return proto == Proto::rts ? rdv->size : size; }
  /// Adaptive routing: the link channels chosen so far by this message and the earlier messages of
  /// the same pair still in flight (they share it, so a pair's messages never overtake).
  std::shared_ptr<std::vector<std::uint32_t>> route;
  /// Inter-level multicast (docs/model.md 2.11): a forked worm. Path positions below `trunk` are
  /// one channel each; from `trunk` on, each position is `fan` channels (path[trunk + (i - trunk)
  /// * fan + k] for branch k), taken in lock-step. `branch` holds the message each branch delivers
  /// (branch[0] == this), empty for an ordinary message; `branch_ej` the ejection channels held.
  std::uint32_t trunk = 0, fan = 1;
  std::uint32_t positions = 0;     // path positions before the ejection channel(s) (set by Network::post)
  std::vector<Msg*> branch;
  std::vector<std::uint32_t> branch_ej;
  Msg* next = nullptr;             // intrusive queue link (node injection queue, unexpected queue)
  Msg* prev = nullptr;             // unexpected queue: the message ahead
  std::uint64_t queued = ~0ULL;    // its number in its destination's indexed unexpected queue (Mailbox)
  const void* queued_in = nullptr; // ... and that Mailbox
  /// The messages on their way to one rank that a receive may match (Engine::on_the_way), in the
  /// order they were sent, from the hand-over to the arrival.
  Msg* way_next = nullptr;
  Msg* way_prev = nullptr;
  bool on_the_way = false;
  /// Its match known before it arrives (Engine::fix_match): the receive it will match, whose
  /// buffer has its bytes already or will once the Copier has made copy number `copy_no`.
  Op* fixed_recv = nullptr;
  std::uint64_t copy_no = 0;
};

/// A packet in flight: a worm whose header is at path position `hop`.
struct Packet {
  Msg* m = nullptr;
  std::uint32_t index = 0;   // packet number within the message
  std::uint32_t wire = 0;    // bytes on the wire: payload + header
  std::uint32_t hop = 0;     // path position the header holds or wants
  std::uint32_t base = 0;    // cut-through: positions below base were freed when the worm drained
  std::uint32_t ej = 0;      // ejection channel, once acquired
  std::uint32_t sub = 0;     // forked worm: the branch whose channel at position `hop` the header takes next
  Time lag = 0;              // path positions between header and tail, rounded up (set when it starts)
  Time body = 0;             // wire bytes times the path's byte time (set when it starts)
  Time wait_since = 0;
  Packet* next_wait = nullptr;
  /// The header event that moves this header carries `tag`; an event with another tag was
  /// superseded (Network::give_back) and is dropped. Tags are unique over the run.
  std::uint64_t tag = 0;
  /// The links this packet took and when, a sum of one TraceHash::term per take (a take given
  /// back subtracts its term); added to the trace hash when the packet's body streams, so that the
  /// hash of a failed run covers the same takes with run-ahead and without (takes ahead of the
  /// failure's time are not in it).
  std::uint64_t trail = 0;
  /// Run-ahead (Network::move_on): positions ahead_from .. hop-1 were taken ahead of time, position
  /// ahead_from at ahead_at and each next one t_hop later.
  std::uint32_t ahead_from = 0;
  Time ahead_at = 0;
  /// A take ahead of a channel that another header had itself taken ahead, on the release of that
  /// header's tail (a line of worms): what the channel knew of that take, which give_back puts back.
  /// Rare; the capacity is kept when the packet is reused.
  struct Covered {
    std::uint32_t position;
    Time ahead;
    Time before_release;
    Packet* before_holder;
  };
  std::vector<Covered> covered;
};

/// A channel (link, injection or ejection). Free at time t when release <= t; a holder whose
/// tail time is not yet known has release == kNever.
struct alignas(64) Channel {  // one cache line: run-ahead reads several channels per event
  Time release = 0;
  Packet* holder = nullptr;  // meaningful while release == kNever
  Packet* wait_head = nullptr;
  Packet* wait_tail = nullptr;
  /// Taken ahead of time (Network::move_on): `holder`'s header reaches the channel at `ahead`, and a
  /// header that wants it earlier (or at the same time with a smaller message id) comes first.
  /// 0 once the channel is taken the ordinary way.
  Time ahead = 0;
  Time before_release = 0;         // `release` and `holder` before the take ahead: what give_back
  Packet* before_holder = nullptr;  // puts back
  std::uint32_t last_in = 0;  // round-robin arbitration: input channel of the header granted last
  bool grant_pending = false;
};

/// Who holds a channel, for the observer only (kept apart from Channel, which the event loop reads
/// on every hop). The worm whose tail occupies the channel until its release, also once its
/// header has streamed out and its Packet went back to the pool (who blocked whom names it; the
/// channel's `holder` is stale then).
struct HeldBy {
  const Msg* msg = nullptr;
  std::uint32_t packet = 0;
  Time since = 0;  // an injection port is taken ahead, when the previous packet's tail time is known
};

/// Callbacks from the network to the engine.
class NetworkListener {
 public:
  virtual ~NetworkListener() = default;
  /// The last packet of m has left the sender's injection channel at time t.
  virtual void on_send_done(Msg& m, Time t) = 0;
  /// The last packet of m has arrived at its destination at time t (the current event time).
  virtual void on_arrival(Msg& m, Time t) = 0;
  /// Demultiplexing per packet (docs/model.md 2.18): a packet of m other than its first takes the
  /// ejection channel of m's destination at t, and the previous packet that node took belonged to
  /// another message.
  virtual void on_packet_resumed(Msg& m, Time t) = 0;
};

/// What a worm waits for (who blocked whom: traces and --explain, runtime/src/blame.hpp).
struct Wait {
  enum class For : std::uint8_t {
    channel,         // a link (resource: the channel)
    ejection_port,   // an ejection port of its destination (resource: the node)
    buffer,          // receive-buffer space at its destination (resource: the node)
    injection_port,  // a message not started yet: an injection port of its source (resource: the node)
  };
  For kind = For::channel;
  std::uint32_t resource = 0;
  const Msg* waiter = nullptr;
  std::uint32_t packet = 0;  // packet 0 for a message waiting to be injected
  /// The worm in the way: it holds `blocker_channel`, or (blocker_holds false) waits ahead for the
  /// same resource. None for receive-buffer space held by received but not yet taken messages.
  const Msg* blocker = nullptr;
  std::uint32_t blocker_packet = 0;
  std::uint32_t blocker_channel = 0;
  bool blocker_holds = true;
  Time t = 0;
};

/// Told when a header takes a channel, starts waiting and gets what it waited for. Optional: the
/// network runs the same without one.
class ChannelObserver {
 public:
  virtual ~ChannelObserver() = default;
  /// Packet `packet` of m takes channel c at t; it holds c until the channel's release time
  /// (Network::release_of), which is known once its tail has left. Called before c changes hands.
  virtual void on_take(std::uint32_t c, const Msg& m, std::uint32_t packet, Time t) = 0;
  virtual void on_wait(const Wait& w) = 0;
  /// ... and gets it (or, for an injection port, its message starts) at t. Also called for a
  /// message that started without waiting.
  virtual void on_grant(const Msg& waiter, std::uint32_t packet, Time t) = 0;
};

class Network {
 public:
  Network(const Machine& machine, EventQueue& q, NetworkListener& l, TraceHash& h, RunStats& s);
  ~Network();

  /// Hands a message to its source node's network interface at time t. A forked worm (m->branch
  /// not empty) must have its path laid out by plan_multicast.
  void post(Msg* m, Time t);
  /// A run split over processes (RunOptions::partition) hands its messages over at the end of the
  /// window they were sent in, `sent` being the time of the sender's turn. Every adaptive route that
  /// ended in the window is kept until then (split_window_ends): a message sent before that end
  /// would have shared it, as post() at its turn would have found it in flight.
  void post_sent_at(Msg* m, Time t, Time sent);
  void split_window_ends() {
    ended_routes_.clear();
    window_frees_.clear();
  }
  void keep_ended_routes() { keeps_ended_routes_ = true; }
  /// Lays out the forked worm of a multicast from src to dsts (docs/model.md 2.11): `path`, `trunk`
  /// and `order` (dsts sorted by the replicating router's port order). UsageError, naming the
  /// reason, unless dsts has exactly one destination below each outgoing channel of the first
  /// replicating router on the route, all at the same distance, on disjoint branches.
  void plan_multicast(int src, std::span<const int> dsts, std::vector<std::uint32_t>& path, std::uint32_t& trunk,
                      std::vector<int>& order) const;
  /// Seeds the adaptive routing choices (RunOptions::seed).
  void set_seed(std::uint64_t seed) { seed_ = seed; }
  /// Handles one network event (inject, header, port_next, grant, ej_grant, buffer_free).
  void handle(const Event& e);
  /// Frees the receive-buffer space m holds at its destination, if any, at time t (schedules the
  /// event); returns whether it held some.
  bool release_buffer(const Msg& m, Time t);
  /// Frees `bytes` of node's receive buffer at time t: another process's receive of a split run.
  void free_buffer_at(int node, std::uint64_t bytes, Time t);
  /// Flow control (docs/model.md 2.16): reserves `bytes` of node's receive buffer now if they fit
  /// (used + bytes <= recv_buffer, or the buffer is unlimited).
  bool reserve_buffer(int node, std::size_t bytes);
  /// Flow control in a split run (Engine::await_protocol): the sends of a window reserve their space
  /// at its end, each after the frees of buffer space the event loop had made before it. The
  /// network keeps the window's frees, in the loop's order, which is every process's.
  void keep_window_frees() { keeps_frees_ = true; }
  std::size_t frees_this_window() const { return window_frees_.size(); }
  struct Reservation {
    std::size_t frees_before = 0;  // of the window's frees
    int node = 0;
    std::size_t bytes = 0;
  };
  /// Takes the window's frees back, then makes them again with the reservations between them, in
  /// the order given: whether each fitted (and took its space).
  std::vector<bool> reserve_between_frees(std::span<const Reservation> asked);
  /// Bytes of receive buffer currently reserved at a node.
  std::int64_t buffer_used(int node) const { return nodes_[static_cast<std::size_t>(node)].buffer_used; }
  /// True while some worm's header waits at `node` for receive-buffer space.
  bool waits_for_buffer(int node) const { return nodes_[static_cast<std::size_t>(node)].buf_wait_head != nullptr; }

  /// Packets whose header waits for a channel or for buffer space.
  std::size_t blocked_packets() const;
  /// Describes a cycle of worms waiting on each other's channels, or "" if there is none.
  std::string find_deadlock_cycle() const;
  /// Describes every blocked packet (for reports).
  std::string describe_blocked() const;
  /// Message-dependent deadlock (docs/model.md 2.7): the messages whose reservation fills node's
  /// receive buffer while their later packets are still in the network, one line each with what
  /// the next of them waits for, followed worm by worm to the header that waits for this very
  /// buffer when it gets there (the cycle).
  struct BufferHolders {
    std::string lines;
    std::int64_t bytes = 0;  // reserved by those messages
    bool cycle = false;      // one of them waits, through other worms, for this very buffer
  };
  BufferHolders describe_buffer_holders(int node) const;
  /// "link (0,1)->(0,2)", "injection port 0 of node 3", ...
  std::string channel_name(std::uint32_t c) const;
  /// The time channel c frees (kNever while its holder's tail time is unknown).
  Time release_of(std::uint32_t c) const { return ch_[c].release; }
  std::size_t channel_count() const { return ch_.size(); }
  std::uint32_t inj_channel(int node, int port) const;
  std::uint32_t ej_channel(int node, int port) const;
  int ejection_ports() const { return net_.ej_ports; }
  int injection_ports() const { return net_.inj_ports; }
  std::int64_t recv_buffer() const { return net_.recv_buffer; }
  void set_observer(ChannelObserver* o) {
    observer_ = o;
    held_.assign(o ? ch_.size() : 0, HeldBy{});
    run_ahead_ = can_run_ahead();
  }
  /// A split run's processes go on past a failure to their window's end (docs/parallel.md): the
  /// channels' release times are noted as they change, with the event loop's place (`*place`), so
  /// that a failure's cut can set them back to what was known at the failure, where the observer
  /// ends the holds still open (Blame::finish).
  void note_releases(const Stamp* place) { release_place_ = place; }
  void forget_releases() { releases_noted_.clear(); }
  void releases_back_to(Stamp failure);

 private:
  /// A path position whose channel is not chosen yet (an injection port), or no channel at all.
  static constexpr std::uint32_t kNoChannel = 0xffffffffu;
  // An injection port is busy (`cur`: the message on it), leaving (its message's last tail leaves
  // at `leaves`, known in advance) or idle. A leaving port is idle for every event after
  // (leaves, leaving_id) in the event order (docs/model.md 1.3), exactly when the port_next event of
  // that key would have freed it; that event is queued only once a message waits for the port.
  struct InjPort {
    Msg* cur = nullptr;
    Time freed = kNever;   // when the port's previous message left it (kNever: no message yet)
    Time leaves = kNever;  // leaving: when its last tail leaves; kNever: not leaving
    std::uint64_t leaving_id = 0;
    int leaving_dst = 0;       // what keeps_order_behind needs of the leaving message, which
    bool leaving_am = false;   // may be received and freed before the port is idle
    bool next_queued = false;  // its port_next event is in the queue
  };
  struct Node {
    std::vector<InjPort> inj;
    Msg* queue_head = nullptr;  // messages waiting for an injection port, FIFO
    Msg* queue_tail = nullptr;
    Packet* ej_wait_head = nullptr;  // headers waiting for an ejection port, FIFO
    Packet* ej_wait_tail = nullptr;
    Time ej_grant_at = kNever;  // time of the earliest ej_grant event not yet handled
    std::uint32_t ej_last_in = 0;  // round-robin arbitration of the ejection ports
    std::int64_t buffer_used = 0;
    Packet* buf_wait_head = nullptr;  // headers in front of the ejection channel, waiting for buffer space
    Packet* buf_wait_tail = nullptr;
    std::uint64_t last_taken = ~0ULL;  // id of the message of the last packet this node took (model.md 2.18)
  };

  void lay_out(Msg* m);  // its route, the byte time it streams at and its path positions
  void try_start_messages(int node, Time t);
  void idle_ports(int node, Time t, std::uint64_t order);  // leaving ports idle before event (t, order)
  void queue_port_next(int node, std::size_t port);      // a message waits: the port_next event
  bool in_order_way(const InjPort& p, const Msg& waiting) const;  // keeps_order_behind, busy or leaving
  void start_packet(Msg* m, Time t);  // packet m->next_packet takes the injection channel at t
  Time interface_ready(const InjPort& port, int node, Time t) const;  // network-interface set-up (model.md 2.17)
  void advance(Packet* pk, Time t);        // header at pk->hop requests that channel at time t
  void took(Packet* pk, std::uint32_t c, Time t);  // header got channel c of position pk->hop at time t
  void move_on(Packet* pk, std::uint32_t j, Time t);  // header took position j at t: on to j + 1
  void take_ahead(Packet* pk, Time at);
  [[gnu::noinline]] static void cover(Packet* pk, const Channel& ch);  // pk takes ch over another take ahead
  bool can_run_ahead() const;
  bool free_ahead(const Packet* pk, std::uint32_t k, Time at) const;
  void give_back(Packet* pk, Time at);  // pk's header took a position ahead that another header reaches first
  void uncover(std::uint32_t c, const Packet* pk);  // takes made ahead on top of pk's go back
  static std::uint32_t positions(const Msg& m) { return m.positions; }
  static std::uint32_t width(const Msg& m, std::uint32_t i) { return i < m.trunk ? 1 : m.fan; }
  static std::uint32_t chan(const Msg& m, std::uint32_t i, std::uint32_t k) {
    return i < m.trunk ? m.path[i] : m.path[m.trunk + (i - m.trunk) * m.fan + k];
  }
  // The channel a waiting header holds: the end of position hop-1, where it waits.
  static std::uint32_t input_channel(const Packet* pk) { return chan(*pk->m, pk->hop - 1, 0); }
  static int dst_of(const Packet* pk) { return pk->m->fan > 1 ? pk->m->branch[pk->sub]->dst : pk->m->dst; }
  void want_ejection(Packet* pk, Time t);       // first packets reserve receive buffer here
  void want_ejection_port(Packet* pk, Time t);
  void got_ejection(Packet* pk, int port, Time t);
  void stream(Packet* pk, Time t);         // header holds the ejection channel: body streams
  void tail_follows(Packet* pk, std::uint32_t j, Time t);
  void free_position(Packet* pk, std::uint32_t i, Time r);
  [[gnu::noinline]] void free_position_or_port(Packet* pk, std::uint32_t i, Time r);
  void choose_channel(Packet* pk, Time t);
  void drain(Packet* pk, Time t);  // cut-through: a blocked long worm drains into the router buffer  // adaptive routing: fixes path position pk->hop
  void set_release(std::uint32_t c, Time r);
  // Every change of a channel's release time goes through here (note_releases). Kept this small so
  // that its callers on the hot path stay inlined.
  void set_release_time(std::uint32_t c, Time r) {
    if (release_place_) [[unlikely]]
      note_release(c);
    ch_[c].release = r;
  }
  [[gnu::noinline, gnu::cold]] void note_release(std::uint32_t c);
  void hold(std::uint32_t c, Packet* pk, Time t);  // pk's header takes channel c at t: busy until its tail leaves
  void injection_wait(const Msg& m, Time t);        // tells the observer what m waits for
  void grant(std::uint32_t c, Time t);
  void ej_grant(int node, Time t);
  void report_wait(Wait w, const Packet* ahead, Time t);
  void start_waiting(Packet*& head, Packet*& tail, Packet* pk, Time t);
  void buffer_freed(int node, Time t);
  bool buffer_admits(const Node& n, const Msg& m) const;


  // The header that gets a freed output (a link, or a node's ejection ports) under
  // NetworkParams::arbitration, unlinked from the wait queue; `out` names the output in the draw.
  Packet* arbitrate(Packet*& head, Packet*& tail, std::uint32_t& last_in, std::uint64_t out, Time t);
  std::uint64_t draw(std::uint64_t x) const;  // seeded splitmix64 of x (docs/model.md 1.2)

  static void enqueue(Packet*& head, Packet*& tail, Packet* p);
  static Packet* dequeue(Packet*& head, Packet*& tail);

  const Machine& machine_;
  const NetworkParams& net_;
  EventQueue& q_;
  NetworkListener& listener_;
  TraceHash& hash_;
  RunStats& stats_;
  std::uint32_t links_ = 0;
  std::vector<Channel> ch_;
  std::vector<HeldBy> held_;  // per channel, kept while an observer is set
  struct ReleaseNoted {
    Stamp at;
    std::uint32_t channel;
    Time before;
  };
  const Stamp* release_place_ = nullptr;
  std::vector<ReleaseNoted> releases_noted_;
  std::vector<Node> nodes_;
  Pool<Packet> packets_;
  // Adaptive routing (docs/model.md 2.10): per (src, dst) pair, the route its in-flight messages share.
  struct PairRoute {
    std::shared_ptr<std::vector<std::uint32_t>> links;
    int inflight = 0;
  };
  bool adaptive_ = false;
  bool own_link_times_ = false;  // some link has its own byte time (Topology::link_byte_time); else all are net_'s
  std::uint64_t seed_ = 1;
  std::unordered_map<std::uint64_t, PairRoute> pair_routes_;
  struct EndedRoute {
    std::shared_ptr<std::vector<std::uint32_t>> links;
    Time at = 0;  // the arrival of its last message in flight
  };
  bool keeps_ended_routes_ = false;
  std::unordered_map<std::uint64_t, EndedRoute> ended_routes_;  // post_sent_at's, this window's
  struct Freed {
    int node;
    std::int64_t bytes;
  };
  bool keeps_frees_ = false;
  std::vector<Freed> window_frees_;  // keep_window_frees
  std::vector<std::uint32_t> candidates_;
  ChannelObserver* observer_ = nullptr;
  bool run_ahead_ = false;  // headers cross free channels without an event per hop (Network::move_on)
  Time now_ = 0;            // the time of the event being handled
  std::uint64_t tags_ = 0;  // the last Packet::tag handed out
};

}  // namespace touchstone::detail
