// The engine (docs/model.md 1.2): the VPs, the event loop and a message's way, from the send to the
// completed receive. Its parts live apart and do not call back: the VPs' code runs in an Executor
// (executor.hpp: fibers or threads and the baton); each VP's receives are matched by its Mailbox
// (mailbox.hpp); groups and contexts are kept by the GroupTable (group_table.hpp); the trace hash,
// statistics, recorder, race detector and blame hear of each event through Instruments
// (instruments.hpp); reports word operations through describe.hpp. The engine's own duties beside
// the loop are split by file: tasks.cpp, requests.cpp, multicast.cpp, barriers.cpp, deadlock.cpp and
// run_reports.cpp.
//
// Exactly one thread -- the baton holder -- runs at any moment: a VP executing its program, or a
// thread executing the event loop on behalf of a VP that has just blocked. Every decision is made
// by the baton holder from the event queue, so a run is deterministic however the host schedules
// threads. A VP may run ahead of the event loop's time as long as it only produces events (sends,
// computation); before it observes anything that could still change (test, iprobe), it waits
// until every earlier event has been committed. That is conservative synchronization with the
// VPs' own clocks as lookahead.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "contexts.hpp"
#include "copier.hpp"
#include "describe.hpp"
#include "event_queue.hpp"
#include "executor.hpp"
#include "forced_schedule.hpp"
#include "group_table.hpp"
#include "instruments.hpp"
#include "livelock.hpp"
#include "mailbox.hpp"
#include "network.hpp"
#include "op.hpp"
#include "pool.hpp"
#include "program_time.hpp"
#include "touchstone/proc.hpp"
#include "touchstone/run.hpp"
#include "vp_ptr.hpp"
#include "watchdog.hpp"

namespace touchstone {
struct Packed;
class Unpacker;
}  // namespace touchstone

namespace touchstone::detail {

class Engine;
class ActiveMessages;

/// Thrown inside VP threads to unwind them when the run aborts.
struct Aborted {};

struct Vp {
  enum class State : std::uint8_t { blocked, running, done };
  enum class Block : std::uint8_t { none, start, ops, probe, barrier, sync, idle, dormant };

  int rank = 0;
  int index = 0;    // its execution context: the rank for a rank's own VP, nodes + k for task context k
  // Its events' place among those of one instant: vp_order(rank) for a rank's own VP; after every
  // VP, by rank and then by the rank's own count of task contexts for a task, so that a process
  // of a split run knows it for its own ranks' tasks (Engine::spawn).
  std::uint64_t order = 0;
  // Its turn's place at its instant (Engine::order_at_instant, RunOptions::on_vp_resume's place):
  // set by the event loop as it wakes the VP, read by the VP's hooks in that turn.
  std::uint64_t turn_place = 0;
  Vp* home = this;  // the rank's own VP: a task (Proc::spawn) receives through its mailbox
  // A task context (Proc::spawn) runs one task at a time, then waits idle (Block::idle) for the
  // next task of the same rank. `task_op` completes when `task` returns; inside the task the
  // world is `world_alias`, a copy of the world with a context of the task's own.
  std::function<void()> task;
  Op* task_op = nullptr;
  std::shared_ptr<const GroupData> world_alias;
  std::function<std::string()> task_text;  // the task in the program's terms (Proc::spawn), for deadlock reports
  std::map<std::uint64_t, std::uint64_t> spawns;  // a rank's VP: its spawns so far, per scope context
  bool is_task() const { return home != this; }
  Time clock = 0;
  State state = State::blocked;
  Block block = Block::start;
  bool waits_for_all = true;  // waitall/wait: every one of them; waitany: any one (beside state and block: no padding)
  std::uint64_t token = 0;  // invalidates stale timed wake-ups
  std::uint64_t wake_queued = ~std::uint64_t{0};  // the token of its wait whose wake-up is queued (wake_at_instant)
  Call pending;             // the blocking call, for deadlock reports
  Time blocked_since = 0;
  // The clock when wake() last raised it to the event time: the CPU's own work until then (what it
  // computed, and active-message handlers that interrupted its wait), without the idle wait.
  Time busy_until_wake = 0;
  WaitList waiting_ops;                // the operations a Block::ops wait needs (deadlock reports)
  std::vector<Op*> request_ops;        // Proc::waitall/waitany: the requests' operations (reused)
  // Receives matched while awaited, in the order they matched (Engine::waitall reads them), and
  // waitall's matched receives not yet completed, a heap by (arrival, index); both reused.
  std::vector<Op*> matched_awaited;
  std::vector<std::uint32_t> ready_recvs;
  std::uint64_t barrier_ctx = 0;       // Block::barrier: the group's context
  const char* collective = nullptr;    // inside a runtime collective whose messages are internal
  std::string label;                   // Proc::annotate: where the program is (deadlock reports)
  std::uint64_t recv_calls = 0;        // receives and probes posted so far (race reports)
  std::uint64_t last_recv_call = 0;    // the number of this VP's (not its home's) last one
  // Livelock detection (docs/debugging.md): the polls seen since the world last changed.
  std::uint64_t actions = 0;  // sends, receives and barriers so far: what could change the world
  PollWatch polls;
  int probe_src = any_source, probe_tag = any_tag;
  std::uint64_t probe_ctx = 0;
  Mailbox mailbox;
  GroupTable::Made groups_made;  // the groups it has made (GroupTable::make)
  std::unique_ptr<Proc> proc;
  // Proc::leave: the program left the emulation; the rest of it runs after the event loop
  // (Engine::run_rests). What it throws waits here, and the operations its Requests let go
  // meanwhile wait in dropped_in_rest, until every rest has run.
  bool left = false;
  // Proc::await_start: it waits (Block::dormant) outside the emulation, not counted among the
  // unfinished programs, until another VP starts it (Proc::start) or the run ends; started, it is
  // a rank of the run from then on (ever_started), and may wait again when its work is done.
  bool start_early = false;  // started before its first call, which await_start returns at once
  bool start_given = false;  // started while it waits: its await_start returns true
  bool ever_started = false;
  std::exception_ptr rest_failure;
  std::vector<Op*> dropped_in_rest;
  // A VP of the open instant (Engine::open_instant): it stops where its runtime call returns to
  // its program, until the instant's programs run.
  bool instant_member = false;
  bool in_waiting_call = false;  // inside a Proc call that may wait (wait, recv, barrier, ...: proc.cpp)
  // Its wait completed at the open instant ahead of the sequential order (Engine::instant_wake):
  // its clock and the trace hash before, and what the completion added to the hash.
  bool ahead_in_instant = false;
  Time clock_before_instant = 0;
  std::uint64_t hash_before_instant = 0, hashed_in_instant = 0;
  std::vector<Op*> dropped_ahead;  // Requests its program let go meanwhile (Engine::drop)
  // Its program runs on past a wait for its own send (Engine::continue_ahead), or for a receive
  // whose message is known (go_on_past_receive), on another host thread, up to its next call; the
  // operation, awaited still, completes the wait when the event loop reaches it (finish_ahead).
  // Written by the event loop only while the program is not running.
  bool continues_ahead = false;
  // Blocked in Engine::wait for one receive, which it may go on past once the receive's message is
  // known (RunOptions::programs_read_no_arrival).
  bool in_receive_wait = false;
  Op* ahead_op = nullptr;  // the send or receive it went on past (a receive's Status: Engine::past_receive_)
  // The host thread its code runs on. The watchdog's thread reads it to sample the VP's stack, so
  // it is atomic: written at each first turn, read whenever a run is stopped.
  std::atomic<pthread_t> host_thread{};
  // Only with RunOptions::perturb: the generator's 2.5 KB of state, seeded in every Vp, made a Vp
  // 3.2 KB instead of 672 bytes (256 VPs' Vps spread over 200 pages instead of 42) and its seeding
  // was a third of the instructions of making a 256-VP engine.
  std::unique_ptr<std::mt19937_64> perturb_rng;
};

/// Owns a Vp. The ranks' VPs are made together in one block of the engine's (VpBlock): a Vp is
/// about a kilobyte, and on 65,536 VPs an allocation and a free each cost more instructions than
/// the rest of making and ending the VP (docs/performance.md, "65,536 VPs"). Task contexts, made
/// one at a time during the run, have allocations of their own.
struct VpRelease {
  bool in_block = false;
  void operator()(Vp* v) const {
    if (in_block) v->~Vp();
    else delete v;
  }
};

/// Room for the Vps of the ranks whose programs run in this process, made in place (Engine's
/// constructor) and ended by their VpPtrs. A process of a split run holds its share only.
class VpBlock {
 public:
  VpBlock() = default;
  ~VpBlock() {
    if (first_) std::allocator<Vp>{}.deallocate(first_, n_);
  }
  VpBlock(const VpBlock&) = delete;
  VpBlock& operator=(const VpBlock&) = delete;
  /// Room for ranks [first, first + n); called once, before make.
  void reserve(std::size_t first, std::size_t n) {
    first_rank_ = first;
    n_ = n;
    first_ = n ? std::allocator<Vp>{}.allocate(n) : nullptr;
  }
  VpPtr make(std::size_t rank) { return VpPtr(new (first_ + (rank - first_rank_)) Vp(), VpRelease{true}); }

 private:
  Vp* first_ = nullptr;
  std::size_t first_rank_ = 0, n_ = 0;
};

/// Marks a VP as inside a runtime collective for as long as it lives (reports name the
/// collective, not its internal receives).
struct InCollective {
  InCollective(Vp& v, const char* name) : v_(v), outer_(v.collective) { v.collective = name; }
  ~InCollective() { v_.collective = outer_; }
  InCollective(const InCollective&) = delete;
  InCollective& operator=(const InCollective&) = delete;
  Vp& v_;
  const char* outer_;
};

class Engine final : public NetworkListener, private Scheduler {
 public:
  Engine(const Machine& machine, const RunOptions& options);
  ~Engine() override;
  RunResult run(const Program& program);
  /// The messages of rank `rank`, whose program runs in this process (Proc::traffic).
  Traffic& traffic_of(int rank) { return traffic_[static_cast<std::size_t>(rank - first_here_)]; }

  // ---- called by Proc, in the VP's own thread while it holds the baton ----
  void enter(Vp& v);
  void entered(Vp& v);  // enter, from where it has checked who calls
  std::uint32_t mark_place(Vp& v);  // Proc::mark
  Op* isend(Vp& v, const Group& g, int dst, int tag, std::span<const std::byte> data, bool synchronous = false);
  Op* imulticast(Vp& v, const Group& g, std::span<const int> dsts, int tag, std::span<const std::byte> data);
  Op* irecv(Vp& v, const Group& g, int src, int tag, std::span<std::byte> buf, bool truncating = false);
  Status wait(Vp& v, Op*& op);
  void waitall(Vp& v, std::span<Op*> ops, std::span<Status> st);  // st: one per op, or empty (not wanted)
  std::size_t waitany(Vp& v, std::span<Op*> ops, Status* st);
  bool test(Vp& v, Op*& op, Status* st);
  bool cancel(Vp& v, Op*& op);  // Proc::cancel
  std::optional<Status> probe(Vp& v, const Group& g, int src, int tag, bool blocking);
  void barrier(Vp& v, const Group& g);
  void compute(Vp& v, Time dt);
  void leave(Vp& v);  // Proc::leave
  bool await_start(Vp& v);                                       // Proc::await_start
  void start(Vp& by, int rank);                                  // Proc::start
  void check_message_time(int src, int dst, std::size_t bytes);  // checked_time.hpp
  // What a run that otherwise ended well left behind (run_reports.cpp). A split run's processes each
  // find it at their own ranks and pool it (pool_leftovers, partition.cpp), so that every process
  // reports, and fails for, what the single process would.
  struct RankedLine {
    Time t;  // misuse: when the rank's turn made it (the run's order: time, then rank)
    int rank;
    std::string text;
  };
  struct Leftovers {
    static constexpr std::size_t kShown = 20;  // of the messages never received, the first
    std::uint64_t unreceived_count = 0;
    std::vector<std::string> unreceived;  // one per message up to kShown, in rank order ("": not shown)
    std::vector<RankedLine> misuse;       // receive requests destroyed without being completed
    std::vector<RankedLine> held;         // Requests still holding an operation
  };
  Leftovers leftovers();
  void pool_leftovers(Leftovers& found);
  static std::string leftovers_report(const Leftovers& found);  // messages never received, misuse
  static std::string held_requests(const Leftovers& found);     // Requests that outlive their program
  std::string first_process_says(std::string report) const;
  bool failure_is_usage_ = false;  // the run's failure is a UsageError raised in VP code
  void drop(Op* op);  // a Request destroyed before completion
  /// Proc::spawn: starts `task` in a task context of v's rank at v's clock.
  Op* spawn(Vp& v, const Group& scope, std::function<void(const Group&)> task, std::function<std::string()> describe);
  /// The VP whose code runs now on behalf of rank v.rank: v itself, or one of its tasks. Inline,
  /// with no task context made yet (most runs) it is v: every Proc call asks.
  Vp& acting(Vp& v) {
    await_turn(v);
    return tasks_.empty() ? v : acting_task(v);
  }

  Group world() const { return Group(world_); }
  Group world(const Vp& v) const { return Group(v.world_alias ? v.world_alias : world_); }
  Group make_group(Vp& v, std::uint64_t parent_ctx, std::vector<int> members);
  Group make_group_like(Vp& v, std::uint64_t parent_ctx, const Group& like);
  Group make_group_with_key(Vp& v, std::uint64_t parent_ctx, std::vector<int> members, std::uint64_t key);
  Group split(Vp& v, const Group& parent, int color, int key);
  const Machine& machine() const { return machine_; }
  const RunOptions& options() const { return opts_; }
  ActiveMessages& am() { return *am_; }
  std::shared_ptr<void>& run_local(Vp& v, const void* key) {  // Proc::run_local
    await_turn(v);
    return run_local_[key];
  }
  /// Every call of a Proc into the engine passes here first. Outside the sequential turns, a VP
  /// whose code runs ahead on a helper thread (run-ahead start, RunOptions::host_cores) waits
  /// here for its turn in the sequential order, and the rest of a program that left the emulation
  /// (Proc::leave) may not call the runtime at all.
  void await_turn(Vp& v) {
    if (v.continues_ahead) [[unlikely]] {
      park_ahead(v);
      if (aborting_) throw Aborted{};  // the run failed before the send completed: it unwinds here
    }
    if (phase_ != Phase::turns) [[unlikely]] off_turn(v);
  }
  /// A runtime call that may have waited returns to the program: a VP that an instant let go on
  /// stops here until the instant's programs run (run_instant_programs).
  void returned(Vp& v) {
    if (v.continues_ahead) [[unlikely]]
      return;  // on another host thread, ahead of the wait's completion: nothing shared
    if (v.instant_member) [[unlikely]]
      returning_to_program(v);
    else if (instant_turns_ && --sample_countdown_ == 0) [[unlikely]]
      time_program();
  }

  // ---- NetworkListener ----
  void on_send_done(Msg& m, Time t) override;
  void on_arrival(Msg& m, Time t) override;
  void on_packet_resumed(Msg& m, Time t) override;

 private:
  friend class ActiveMessages;
  static constexpr int kMain = Executor::kMain;

  // The data of g as v sees it: the world placeholder stands for a task's world alias.
  const GroupData& resolve(const Vp& v, const Group& g) const;
  std::shared_ptr<const GroupData> resolve_shared(const Vp& v, const Group& g) const;
  Op* post_send(Vp& v, int dst, int tag, std::uint64_t ctx, std::span<const std::byte> data, bool synchronous = false);
  Msg* make_msg(int src, int dst, int tag, std::uint64_t ctx, std::size_t size);
  // A message set-up of node m->src that began at `start`: hashed, counted, recorded, and handed
  // to the network at `handed`.
  // `order`: the sending event's place among those of its instant (HandedHere::sent).
  void hand_over(Msg* m, Time start, Time handed, std::uint64_t order);
  Time after_tail(int src, Time start, Time done) const;
  // Flow control (docs/model.md 2.16): how a send's message goes. `buffered`: eager, with space
  // reserved at its destination; `no_space`: by rendezvous, since it did not fit there;
  // `at_window_end`: a split run decides between those two when the processes meet (await_protocol).
  enum class SendProtocol : std::uint8_t { eager, buffered, rendezvous, no_space, at_window_end };
  SendProtocol send_protocol(Vp& v, int dst, std::uint64_t ctx, std::size_t size);
  // The send op's message m goes by rendezvous: m becomes its data, waiting; returns the request to send.
  Msg* request_to_send(Op* op, Msg* m);
  Op* await_protocol(Vp& v, Op* op, Msg* m, Time start);
  struct HandedHere;
  void protocol_decided(HandedHere& h, bool buffered);
  // `order`: the place of the event that matched it (the request's arrival, or v's turn).
  void clear_to_send(Vp& v, Op* op, Msg* rts, Time at, std::uint64_t order);
  void on_clear_to_send(Msg& cts, Time t);
  void on_rendezvous_data(Msg& m, Time t);
  Op* post_recv(Vp& v, int src, int tag, std::uint64_t ctx, std::shared_ptr<const GroupData> g,
                std::span<std::byte> buf);
  /// Completes a matched receive. `waiting_since`: the clock at which v started waiting for it in
  /// this call (its CPU was free from then on: receive overlap, docs/model.md 2.15).
  Status complete_recv(Vp& v, Op*& op, Time waiting_since);
  void complete_send(Vp& v, Op*& op);
  void block(Vp& v, Vp::Block why, const Call& what);
  void stop(Vp& v, Vp::Block why, const Call& what);  // block, up to the pass
  void mark_blocked(Vp& v, Vp::Block why, const Call& what);  // stop, without on_vp_pause
  void goes_on(Vp& v);                                // block, from the pass on
  // A program that goes on past a wait for its own send (docs/parallel.md, "Programs that go on
  // past their sends"): continue_ahead lets it, park_ahead stops it at its next call, and
  // finish_ahead completes the wait when the event loop reaches the send's completion.
  bool continue_ahead(Vp& v, Op*& op);
  void park_ahead(Vp& v);
  enum class Ahead : std::uint8_t { done, waits_again, failed };
  Ahead finish_ahead(Vp& v);
  // The same past a wait for receives whose messages are known ("Programs that go on past their
  // receives"): may_go_on asks, go_on_past_receive has the VP's program launched (launch_ahead).
  bool may_go_on_past_receive(const Vp& v) const;
  void go_on_past_receive(Vp& v);
  // One waitall in progress (requests.cpp): in its caller's frame while the VP's own code runs it,
  // in the VP's PastReceive once its program went on past it and the event loop completes it.
  struct WaitAll {
    std::span<Op*> ops;
    std::span<Status> st;         // none once its program went on: it has its statuses already
    Time since = 0;               // the clock the next receive to complete is waited for from
    std::size_t pending = 0;      // receives not completed yet; then the sends, in their order:
    std::size_t next_send = 0;    // ops[next_send] is the one waited for
    bool looked = false;          // for the matches its messages on their way are sure of
    Call waits_for() const {      // once waitall_moves returned false
      return pending ? Call::counting(Call::Form::waitall_recvs, pending)
                     : Call::on(Call::Form::waitall_for, *ops[next_send]);
    }
  };
  void begin_waitall(Vp& v, WaitAll& w);
  bool waitall_moves(Vp& v, WaitAll& w);  // completes what it can; false: it waits (w.waits_for())
  void look_before_waiting(Vp& v, WaitAll& w);
  Ahead waitall_ahead(Vp& v);  // finish_ahead's part past a waitall
  void launch_ahead();
  // A receive's Status but its arrival time: what its wait returns.
  static Status received_status(const Op& recv, const Msg& m) {
    Status st;
    // A group in world order (the world itself, above all) has group rank = world rank: no search.
    st.source = recv.group && !recv.group->in_world_order ? [&] {
      auto it = std::lower_bound(recv.group->by_world.begin(), recv.group->by_world.end(), std::pair{m.src, -1});
      return it->second;
    }() : m.src;
    st.tag = m.tag;
    st.size = m.size;
    st.truncated = m.size > recv.buf.size();
    return st;
  }
  // Matches known before the message arrives (docs/parallel.md, "Copies made when the match is
  // known"): the messages on their way to each rank, and the receives they are sure to match.
  void on_the_way(Msg& m);      // handed to the network, towards a receive of m.dst's
  void off_the_way(Msg& m);     // arrived (or freed)
  void fix_at_send(Msg& m);     // just sent: does a receive its destination waits for take it?
  void fix_inbound(Vp& v, bool any_size = false);  // v is about to wait: which messages do?
  void fix_match(Msg& m, Op& recv, bool any_size = false);
  void fix_rendezvous(Msg& data, Op& recv);  // the request to send is matched: the data is recv's
  void fix(Msg& m, Op& recv);                // fix_match's and fix_rendezvous's copy
  void unfix(Op& recv);         // a fixed receive let go before its message arrived
  // Copy number k (0: made at once) moves m's bytes between its ends' memory: each one's code waits
  // for it before it runs again (copies_made_for).
  void copying_between(const Msg& m, std::uint64_t k) {
    if (k) ways_[static_cast<std::size_t>(m.src)].copies_upto = ways_[static_cast<std::size_t>(m.dst)].copies_upto = k;
  }
  // Before the code of context `index` runs again: the copies touching its memory are made (a
  // task's context has none: tasks' ranks fix nothing).
  void copies_made_for(int index) {
    if (fixes_matches_ && index < static_cast<int>(ways_.size()))
      copier_.wait(ways_[static_cast<std::size_t>(index)].copies_upto);
  }
  // Marks ops awaited by v (and records them); inline, as in every wait.
  static void await_ops(Vp& v, std::span<Op* const> ops, bool all) {
    v.waiting_ops.clear();
    v.matched_awaited.clear();
    v.waits_for_all = all;
    for (Op* op : ops)
      if (op) op->awaited = true, v.waiting_ops.push_back(op);
  }
  static void unawait_ops(Vp& v, std::span<Op* const> ops) {
    for (Op* op : ops)
      if (op) op->awaited = false;
    v.waiting_ops.clear();
    v.matched_awaited.clear();
  }
  void sync(Vp& v);  // waits until the event loop has reached v's clock
  void futile_poll(Vp& v, const Call& what);  // livelock detection
  std::string interrupted_report(const Vp* v) const;             // SIGINT, SIGTERM
  std::string blocked_vps() const;  // one line per blocked rank's VP: since when, in what, where
  // One step of progress, for the watchdog: only the baton holder writes, so no atomic add.
  void step() { progress_.steps.store(progress_.steps.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  std::string write_evidence(bool failed);
  // Inlined into the event loop, where it runs at every turn: its split-run branch alone made GCC
  // call it (0.3% more instructions on the Figure-9 sweep, callgrind).
  [[gnu::always_inline]] inline void wake(Vp& v);
  [[gnu::cold]] void place_turn(Vp& v);  // a split run's: Vp::turn_place
  void tell_matched(Op& op);  // a receive matched: its awaiting VP hears of it
  void wake_at_instant(Vp& v);  // a message event lets v go on: its turn follows the instant's message events
  void software_barrier(Vp& v, const GroupData& g);

  void vp_main(Vp& v);
  void begin_turn(Vp& v);       // v's code gets the host CPU from the scheduler: its first turn
  void run_program_ahead(Vp& v);
  void off_turn(Vp& v);         // await_turn's slow path
  void park(Vp& v);
  void open_instant(Vp& first);  // the programs of an instant (RunOptions::host_cores), below
  void instant_wake(Vp& v);
  bool behind_instant(const Event& e);
  // A VP event lets its VP go on: a barrier's release always, a wake-up unless stale (its token).
  static bool lets_go_on(const Event& e) {
    const Vp& v = *static_cast<const Vp*>(e.p);
    return e.kind() == Ev::barrier || (v.state == Vp::State::blocked && v.token == e.a);
  }
  void returning_to_program(Vp& v);
  void waits_in_instant(Vp& v);
  void end_of_completion(Vp& v);
  void run_instant_programs();
  void time_program();
  void end_program(Vp& v);      // a program's end: at its return, or where it left (Proc::leave)
  bool parallel_host_turns() const;
  std::size_t sample_turns(std::span<const int> contexts, bool ahead, bool& worth_handing_out);
  void run_rests();
  bool starts_ahead() const;    // RunOptions::host_cores: the VPs' first turns run ahead in parallel
  void task_main(Vp& t);     // a task context's life: one task after another
  void finish_task(Vp& t);   // its task returned: the request completes at its clock
  Vp& context(int index);    // the VP of an execution context
  Vp& acting_task(Vp& v);    // acting's search once task contexts exist
  Vp* idle_task();
  Vp* dormant_vp();
  bool runs_no_rank(int r) const;  // deadlock reports: RunOptions::ranks and the VPs started since  // at the run's
                                   // end: a VP still waiting to be started, nullptr if none
  std::uint64_t unfinished_contexts() const;
  int retire_idle_task();  // a task context waiting for work, nullptr if none (the run's end)
  void start_vps();
  // ---- several processes (RunOptions::partition; partition.cpp) ----
  bool here(int rank) const { return rank >= first_here_ && rank < end_here_; }  // its program runs here
  int process_of(int rank) const;                                                // the process that runs rank's program
  void check_partition() const;                   // refuses what a split run cannot do yet (UsageError)
  void take_rendezvous(Msg& m, Msg::Proto proto, std::uint64_t rendezvous, std::uint64_t data_id);
  Msg* waiting_data(std::uint64_t id);            // rendezvous_data_'s, taken out
  void refuse_in_split(const char* what) const {  // ... and what only a VP's call shows
    if (partition_) [[unlikely]]
      refuse_call(what);
  }
  [[noreturn]] void refuse_call(const char* what) const;
  Time least_send_setup() const;  // no VP's message reaches the network sooner
  Time lookahead() const;         // ... nor a hardware barrier releases sooner
  // The loop's look before each event, out of line (the sequential loop pays only the test of
  // partition_): the window goes on, or was crossed (its messages swapped), or the run is over.
  enum class Window : std::uint8_t { goes_on, crossed, over };
  Window window_check();
  bool at_window_end();                           // the window's events are done: swap its messages (false: none left)
  void acts_at(Time t);                           // a VP may act at t: the window ends by t + lookahead_
  void hand_over_window();                        // ... and hand them over, in the single process's order
  void announce_failure();                        // this process failed: the others hear of it at the window's end
  // A split run that failed inside a window where the failure could not be cut exactly (cut_at):
  // the processes' summed hash is not the single process's (trace.hpp, failed_hash_of). A deadlock
  // is found at a window's end, after every event and with the window's sends numbered, and sums to
  // the single process's.
  bool hash_of_shares() const { return partition_ && failed_at_ != kNever && !cut_at_failure_; }
  // A failure inside a window: every process takes back what it did past the failure's place in
  // the sequential order (the hash's terms and the contexts' clocks), and numbers and hashes the
  // window's sends made before it, so that the summed hash is the single process's. `places_` are
  // the places of the window's events in this process, in the loop's order: (time, order key),
  // never decreasing (an event handled after one with a greater key at its instant is at that
  // one's place, which is where the single process handles it too), each with the hash before it;
  // `clocks_noted_` a context's clock before the first place of the window that moved it.
  struct Place {
    Stamp at;  // its step: a part of a turn that a layer marked (mark_place)
    std::uint64_t hash_before;
  };
  std::vector<Place> places_;
  std::uint64_t first_place_ = 0;  // the number of places_[0] among the run's places
  struct ClockNoted {
    std::uint64_t place;
    int index;
    Time clock;
  };
  std::vector<ClockNoted> clocks_noted_;
  bool cut_at_failure_ = false;  // done, exactly: the hash is the single process's
  Stamp cut_place_{};            // ... at this place
  bool failed_before_instant_ = false;  // the failure is a time limit's, at order 0 of its instant
  // A run that records or detects races: every record and race is stamped with its place
  // (Recorder::cut, RaceDetector::cut), and every context's wait with the place of the call that
  // began it. records_cut_at_: where a failed run cuts them (a split run's cut_at, or one process's
  // failed turn).
  bool stamps_records_ = false;
  std::optional<Stamp> records_cut_at_;
  std::unordered_map<int, Stamp> blocked_at_;  // context index -> where its wait began
  Stamp began(const Vp& v) const {
    const auto it = blocked_at_.find(v.index);
    return it == blocked_at_.end() ? Stamp{} : it->second;
  }
  // The place of the event or turn being handled, with the part of the turn a layer's marks have
  // reached (mark_place); kept where a split run notes places or a run stamps its records.
  Stamp place_now_;
  void enter_place(Stamp at);
  void note_clock(const Vp& v) {  // before the current place moves v's clock
    if (partition_ && !places_.empty()) [[unlikely]]
      clocks_noted_.push_back(ClockNoted{first_place_ + places_.size() - 1, v.index, v.clock});
  }
  void forget_places();  // a window ended without a failure
  // Takes back what this process did past `failure` and numbers and hashes the window's sends made
  // before it: the Records at offsets `records` of the swap `all`, in the sequential order.
  void cut_at(Stamp failure, std::span<const std::byte> all, std::span<const std::size_t> records);
  bool gather_schedule_use(bool clean);           // the run's end: the schedule's entries every process used
  void gather_clocks(std::vector<Time>& clocks);  // ... every rank's clock, from its process
  void combine_counts();                          // ... and every process's hash terms and counts, summed
  void gather_evidence();                         // ... and their records, for process 0 to write
  void gather_races();                            // ... and the races found at their ranks
  void record_unreceived();                       // a failed run's messages left in the mailboxes
  void numbered(Op& send, std::uint64_t id);      // a split run's send gets its message's id
  bool evidence_gathered_ = false;
  Time evidence_upto_ = 0;  // a split run: the latest clock of every process, as a failure left it
  // hand_over's part that every process of a split run does; `sent_at`: the sender's turn.
  void to_network(Msg* m, Time start, Time handed, Time sent_at);

  // ---- Scheduler: the event loop, run by whoever gives up the baton ----
  int next() override;
  int run_events();  // next()'s loop, without its guard
  void prefetch_next_turn() const;
  int next_to_unwind();
  void abort_run(std::string report);
  void fail_with_current_exception(const std::string& what_failed);
  // runtime/src/deadlock.cpp
  // What decides a deadlock report's headline and is seen only where the blocked ranks run: a split
  // run's processes pool theirs (Engine::pooled_headline_facts) so that each opens as one process's.
  // The blocked ranks' waits (deadlock.cpp): the ranks each needs, with the call it waits in, the
  // messages unreceived at it, and why ranks that finished did (RunOptions::describe_finished).
  // This process's, or pooled over a split run's processes (pooled_headline_facts).
  struct WaitGraph {
    struct Edge {
      int to;
      std::string call;
    };
    std::vector<std::uint8_t> blocked;                   // by rank
    std::vector<std::vector<Edge>> edges;                // by rank
    std::vector<std::pair<int, std::string>> unmatched;  // (blocked rank, line), in rank order
    std::vector<std::pair<int, std::string>> finished;   // (finished rank, why)
    std::vector<std::string> unreceived;                 // every rank's unreceived messages: the first 64
    std::uint64_t unreceived_count = 0;                  // ... of how many
    bool whole = true;                                   // every process's ranks
    void pack(Packed& out) const;
    void unpack(Unpacker& in);  // adds another process's
  };
  WaitGraph wait_graph() const;
  std::string describe_waits(const WaitGraph& g) const;
  std::string full_buffers() const;
  // A deadlock report's lines about the contexts that wait: each blocked rank's (in rank order) and
  // each waiting task's (by its order key, which a split run's processes know alike), and the full
  // receive buffers of its nodes.
  struct BlockedLines {
    static constexpr std::size_t kRanksShown = 64;
    std::uint64_t ranks_blocked = 0;
    std::vector<std::string> ranks;  // the first kRanksShown
    std::vector<std::pair<std::uint64_t, std::string>> tasks;
    std::string buffers;
  };
  BlockedLines blocked_lines() const;
  struct HeadlineFacts {
    Time stuck_at = 0;  // deadlock_stuck_at()
    bool buffer_cycle = false;
    std::string forced;  // infeasible_choice()
    WaitGraph waits;
    BlockedLines lines;  // every process's, in the single process's order
  };
  Time deadlock_stuck_at() const;
  std::string deadlock_report(const HeadlineFacts* pooled = nullptr) const;
  HeadlineFacts pooled_headline_facts();
  std::string infeasible_choice() const;  // a forced receive that waits in vain (RunOptions::schedule)
  bool buffer_cycle() const;
  std::string describe_wait(const Vp& v) const;
  // A synchronous send's message m was matched at `at` by a receive of VP v: v acknowledges it, in
  // its turn (order) or in m's arrival; the acknowledgement's arrival completes the send.
  void acknowledge(Vp& v, const Msg& m, Time at, std::uint64_t order);
  void on_acknowledged(Msg& ack, Time t);
  void synchronized(Op* op, Time t);  // a synchronous or held send may complete from t on
  void hold_send(Op* op, Msg* m);     // send_holds_until_received: op completes when m's receive does
  void on_received(Op* op, Time t);   // ... a receive of one of its messages completed at t
  Msg* new_msg();
  void free_msg(Msg* m);
  void keep_payload(Op* send);        // the send may reuse its buffer: its unmatched message copies it
  void deliver(Msg& m, Op& recv, bool posting = false);  // the match: the bytes go into the receive buffer
  bool posted_beside(const Msg& m, const Op& recv) const;  // deliver's copy at a posting to the Copier?
  bool reached_beside_programs(const Msg& m) const;        // handlers or tasks touch its ends' memory
  Op* new_op();
  void free_op(Op* op);

  const Machine& machine_;
  RunOptions opts_;
  Pool<Msg> msgs_;  // declared before everything that points into them
  Pool<Op> ops_;
  Copier copier_;   // declared after the messages it copies from: its last copies end first
  GroupTable groups_;
  std::shared_ptr<const GroupData> world_;  // groups_.world(), at hand for resolve and reports
  EventQueue queue_;
  Instruments instruments_;  // the trace hash, statistics, recorder, race detector, blame: one call per event
  ForcedSchedule forced_;    // RunOptions::schedule
  std::unique_ptr<Network> network_;
  VpBlock vp_block_;  // before vps_: freed after every Vp in it has ended
  // The messages of the ranks whose programs run in this process (Proc::traffic), by rank - first_here_:
  // out of Vp, which would grow past its kilobyte.
  std::vector<Traffic> traffic_;
  std::vector<VpPtr> vps_;
  std::vector<VpPtr> tasks_;                        // task contexts, by index - nodes
  std::vector<std::vector<Vp*>> idle_tasks_;        // per rank: its task contexts waiting for work
  std::vector<std::vector<Vp*>> tasks_of_;          // per rank: every task context of that rank
  bool retiring_ = false;                           // the run is over: idle task contexts end
  // What unfinished_contexts() counts, kept as it changes: a split run asks at every window's end,
  // and a scan of every rank there made a 262,144-VP scatter over 4 processes 50 times slower.
  std::uint64_t unfinished_vps_ = 0;    // this process's ranks whose programs have not ended
  std::uint64_t busy_tasks_ = 0;        // task contexts given a task that has not returned
  std::size_t retire_from_ = 0;         // idle_task: the ranks before it have no idle context left
  std::size_t dormant_from_ = 0;        // dormant_vp: the ranks before it wait no more
  std::unique_ptr<Executor> executor_;  // runs the VPs' code and passes the baton
  const Program* program_ = nullptr;
  Time now_ = 0;
  int resume_next_ = kMain;
  // What runs: the programs' first turns ahead of the sequential order (Executor::run_ahead), the
  // sequential turns, or the rests of the programs that left (run_rests). Set before helper
  // threads start and after they are joined, so they read it race-free; in the turns, await_turn
  // reads nothing else (not the thread-local of Executor::running_ahead, a __tls_get_addr call in
  // a shared library).
  // (`timed`: a turn whose program is being timed up to its next call, time_program.)
  enum class Phase : std::uint8_t { turns, ahead, rests, timed };
  Phase phase_ = Phase::turns;
  // RunOptions::host_cores: the programs of the VPs an instant lets go on run at once
  // (open_instant): the open instant's time, its members, how many have yet to be woken, and
  // those stopped where their calls returned.
  bool instant_turns_ = false;
  Time instant_at_ = -1;
  std::vector<int> instant_;
  std::size_t instant_waking_ = 0;
  std::vector<int> instant_parked_;
  std::vector<int> instant_ready_;  // members that went on past their sends: at their next calls
  std::vector<int> instant_members_;  // every member of the last instant opened (a failed run's hash)
  int last_turn_rank_ = -1;           // the last VP whose turn (not its completion) ran at it
  std::chrono::nanoseconds worthwhile_{0};
  ProgramTimeMean program_time_;  // a program's host time between calls
  std::chrono::steady_clock::time_point program_timed_from_;
  std::int64_t sample_countdown_ = ProgramTimeMean::kSampleEvery;
  std::uint64_t instants_at_once_ = 0;  // RunResult::instants_at_once
  std::uint64_t windows_ = 0;           // RunResult::windows
  bool ahead_of_sends_ = false;         // continue_ahead may let programs go on (start_vps)
  int launch_next_ = kMain;             // a program that went on past its send, for the next helper
  bool receives_go_on_ = false;         // go_on_past_receive may let programs go on (start_vps)
  std::vector<int> going_on_;           // programs that go on past their receives, for the helpers
  // Per rank that may go on past its receives (out of Vp, which stays small; written in the rank's
  // turn or by the event loop while the rank is blocked, before it goes on): a wait's receive (none
  // for a waitall), the clock the wait started at and the Status it returns, or a waitall's state;
  // and how many of the receives waited for have no known match yet.
  struct PastReceive {
    Op* recv = nullptr;
    Time since = 0;
    Status status;
    std::size_t unfixed = 0;
    // A waitall's state as it waits (a copy: the caller's own stays in registers), and once it
    // went on past it, its operations, whose list the program may reuse.
    WaitAll waitall;
    std::vector<Op*> ops;
  };
  std::vector<std::unique_ptr<PastReceive>> past_receive_;
  PastReceive& past_receive(const Vp& v) {
    auto& p = past_receive_[static_cast<std::size_t>(v.rank)];
    if (!p) p = std::make_unique<PastReceive>();
    return *p;
  }
  std::uint64_t continued_ahead_ = 0;   // RunResult::continued_ahead
  bool fixes_matches_ = false;          // fix_match may deliver before the arrival (real payloads)
  std::uint32_t fix_looks_ = 0;         // fix_inbound's looks so far (Op::fix_look)
  std::uint64_t delivered_early_ = 0;   // RunResult::delivered_early
  // Per rank (out of Vp, which every message touches): the messages on their way to it that a
  // receive may match, in the order they were sent (on_the_way), where a wait looks for matches
  // known before their arrival; and the last copy into or out of its memory handed to the Copier
  // (fix_match), made before its code runs again.
  struct Way {
    Msg* head = nullptr;
    Msg* tail = nullptr;
    std::uint32_t count = 0;
    std::uint32_t fixable = 0;  // of them, messages of kFixFrom bytes or more
    std::uint64_t copies_upto = 0;
  };
  // Smaller messages are not fixed: looking for their receive costs about what their copy at the
  // arrival does, and their sends rarely complete first (Figure-9 all-to-all at 64 B, 1-lev-dir:
  // 2.4% more instructions with every message looked at).
  static constexpr std::size_t kFixFrom = Copier::kHandOverFrom;
  static bool fixable(const Msg& m) { return m.size >= kFixFrom && m.proto == Msg::Proto::eager; }
  // ... or, for a receive whose program may go on past its wait (any_size), eager of any size.
  static bool fixable(const Msg& m, bool any_size) { return any_size ? m.proto == Msg::Proto::eager : fixable(m); }
  std::vector<Way> ways_;
  std::vector<int> left_;      // the contexts of the VPs that left (Proc::leave), in that order
  // ... and the places of their leave() calls in the sequential order (time, order key): a split run's
  // processes compare the first failure of their rests by them (pool_rest_failures).
  std::vector<std::pair<Time, std::uint64_t>> left_at_;
  std::pair<Time, std::uint64_t> rest_failed_at_{kNever, 0};
  bool failed_before_rests_ = false;
  void pool_rest_failures();
  std::size_t next_rest_ = 0;  // run_rests one after another, through next(): the next of left_
  std::size_t fits_below_ = 0;  // check_message_time: every message smaller fits the time limit
  bool aborting_ = false;
  std::string failure_;
  Progress progress_;  // for the watchdog (RunOptions::wall_limit_s, stop_on_signals, progress_line)
  std::vector<RankedLine> misuse_;  // deferred errors (dropped requests)
  std::uint64_t next_msg_id_ = 0;
  // RunOptions::partition: the ranks whose programs run here ([0, nodes) without one), the end of
  // the window whose events the loop commits before the processes meet (acts_at), and the messages
  // this process's VPs handed over in it, which get their ids then. A
  // process other than the first keeps the network's hash terms and statistics aside: the
  // first one counts them for all.
  Partition* partition_ = nullptr;
  int first_here_ = 0, end_here_ = 0;
  Time lookahead_ = 0, window_end_ = 0;
  // The place of the network event being handled among those of its instant, counted alike by every
  // process (each handles every network event, in the same order): in a split run the order of its
  // place (split_place) and of the messages sent in it (hand_over). Not the id of the arriving
  // message: an event the network pushes at the current time with a lower id than the one being
  // handled is handled after it.
  std::uint64_t network_event_place_ = 0;
  Time network_event_instant_ = -1;
  // A failure in the handling of a network event (a user topology's route that throws) comes at the
  // same event in every process: its place among those of its instant (at_window_end), 0 for others.
  // A failure in an active message's handler comes in its node's process alone: the others have
  // gone on past it, and so the place of every request's arrival ends with it (place_ends_).
  bool in_network_event_ = false, failed_in_handler_ = false, place_ends_ = false;
  std::uint64_t failed_network_place_ = 0;
  void handle_network_event(const Event& e) {
    if (partition_) [[unlikely]] {
      in_network_event_ = true;  // left set by what throws out of it
      network_->handle(e);
      in_network_event_ = false;
      return;
    }
    network_->handle(e);
  }
  // The place of event e at its order key: a context woken again at its instant goes on in the part
  // of its turn it had reached.
  Stamp place_of(const Event& e) const {
    return e.t == place_now_.t && e.order == place_now_.order ? place_now_ : Stamp{e.t, e.order};
  }
  // The place of event e in a split run. A VP's event is at its context's order (woken again at its
  // instant, it goes on in the part of its turn it had reached); a network event at its place among
  // those of its instant, counted alike by every process; an event of this process's own between two
  // network events (a held send's receipt) just after the earlier one.
  Stamp split_place(const Event& e) {
    if (e.order >= vp_order(0)) return place_of(e);
    if (e.t != network_event_instant_) network_event_instant_ = e.t, network_event_place_ = 0;
    if (e.kind() == Ev::received) return Stamp{e.t, network_event_place_, 1};
    return Stamp{e.t, ++network_event_place_};
  }
  struct HandedHere {
    Msg* m;
    // The place of the event that sent it: its time; its order among the events of its instant,
    // vp_order(sender) for a VP's turn, the network event's place (network_event_place_) for one sent
    // in a network event's handling (an active message's reply, a clear to send, an
    // acknowledgement); and the part of its turn, since a layer's failure may cut a turn between
    // sends (Proc::mark).
    Stamp sent;
    Time start, handed;  // hand_over's times
    std::size_t held = Instruments::kNotHeld;  // the places of its records (Instruments::hold_sent)
    // Flow control (await_protocol): eager or rendezvous is decided at the window's end, after the
    // first `frees_before` of the window's frees of buffer space (Network::frees_this_window).
    bool undecided = false;
    std::size_t frees_before = 0;
    // Where its sender's turn came among the turns of its instant (order_at_instant): what the
    // window's end numbers the messages by.
    std::uint64_t numbered_at = 0;
  };
  // The order of a turn at its instant, for numbering its sends: a context woken at the current time
  // by a turn with a greater order key (its task completing the request the context waits for) is
  // taken after that turn, in one process as in the split run's. So a turn's order is the greatest
  // of the turns' keys this process has taken at its instant so far: every process takes its own
  // contexts' turns in the single process's order, and the keys of different processes' contexts
  // differ, so the processes' turns merge in that order. A network event's handling keeps its place.
  Time turns_instant_ = -1;
  std::uint64_t turns_top_ = 0;
  void took_turn(const Event& e) {
    if (e.order < vp_order(0)) return;
    if (e.t != turns_instant_) turns_instant_ = e.t, turns_top_ = 0;
    turns_top_ = std::max(turns_top_, e.order);
  }
  std::uint64_t order_at_instant(std::uint64_t order) const {
    return order >= vp_order(0) && now_ == turns_instant_ ? std::max(order, turns_top_) : order;
  }
  std::vector<HandedHere> handed_here_;
  // A multicast's lead handed over in this window: the destinations it was planned for (world ranks).
  std::unordered_map<const Msg*, std::vector<int>> multicast_dsts_;
  // At the window's end: this process's multicast, and another's, in this process's copy of the network.
  void hand_over_multicast(const HandedHere& h);
  void number_multicast(const HandedHere& h);  // ... its branches numbered and hashed, as hand_over numbers a send
  void number_own(Msg& m, std::uint64_t id, std::uint64_t data_id);
  void take_multicast(const HandedHere& h, std::span<const int> dsts, std::span<const std::byte> payload,
                      std::span<const std::uint32_t> vc, bool held);
  // A rendezvous between ranks of two processes (docs/model.md 2.16), by its data's id: in the
  // sender's process the data waiting for its clear to send; in the receiver's, the data's copy
  // made with its request to send, which its receive completes and its bytes reach later.
  std::unordered_map<std::uint64_t, Msg*> rendezvous_data_;
  // A split run's synchronous sends to other processes' ranks, by message id, until acknowledged.
  std::unordered_map<std::uint64_t, Op*> awaiting_ack_;
  // A split run's sends held until received (send_holds_until_received): in the sender's process
  // the held send of each message to another process's rank, by message id, until its receipt
  // comes; in the receiver's, the receipts of this window (message id, the receive's completion),
  // told to every process at the window's end.
  std::unordered_map<std::uint64_t, Op*> awaiting_receipt_;
  // ... and with bounded receive buffers, the space a receive or a handler here frees at its
  // destination, which every process's copy of the network frees at that time.
  struct Receipt {
    enum class Kind : std::uint64_t { held_send, buffer_freed };
    Kind kind = Kind::held_send;
    std::uint64_t id = 0;  // the message's
    Time at = 0;
    std::int64_t rank = 0;    // held_send: the sender's (its process holds the send); buffer_freed: the node's
    std::uint64_t bytes = 0;  // buffer_freed
  };
  std::vector<Receipt> receipts_here_;
  void receipt_here(const Msg& m, Time t, Receipt::Kind kind);
  void release_buffer(const Msg& m, Time t);  // at a receive's or a handler's end
  Time least_recv_overhead() const;
  bool failure_told_ = false;
  bool split_over_ = false;  // every process's programs have ended (Window::over)
  // Where in the sequential order this process failed (its first abort_run): the time and the order
  // of the context that failed (0: an event of the loop's), at its instant as its sends are numbered
  // (order_at_instant: a turn woken at its instant by a greater key's comes after that one). Of the
  // processes failed in one window, the first in that order is the run's failure, as the single
  // process would stop there. RunError::failed_place is failed_order_.
  Time failed_at_ = kNever;
  std::uint64_t failed_order_ = 0;
  bool counts_network_events_ = true;  // the first process's, or the only one's
  TraceHash network_hash_aside_;
  RunStats network_stats_aside_;
  struct BarrierState {
    int members = 0, arrived = 0;
    int arrived_here = 0;  // in a split run, this window's arrivals of this process's members
    Time latest = 0;
    std::vector<Vp*> waiting;  // this process's members
    std::vector<std::uint32_t> heard;  // race detection: the members' vector clocks as they arrived
  };
  std::unordered_map<std::uint64_t, BarrierState> barriers_;  // hardware barriers, by group context
  std::vector<std::uint64_t> barriers_here_;  // a split run's barriers with arrivals here in this window
  void release_barrier(std::uint64_t ctx);
  std::unique_ptr<ActiveMessages> am_;
  // Proc::run_local. Declared last, so destroyed first: after the VPs' programs have ended and
  // while the rest of the engine is intact, should an object in a slot still refer to it.
  std::map<const void*, std::shared_ptr<void>> run_local_;
};

}  // namespace touchstone::detail
