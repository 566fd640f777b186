// The Proc API: everything a virtual processor's program can do (docs/model.md).
//
//   void ring(touchstone::Proc& p) {
//     int next = (p.rank() + 1) % p.size(), prev = (p.rank() + p.size() - 1) % p.size();
//     std::array<std::byte, 64> out{}, in{};
//     p.sendrecv(next, 0, out, prev, 0, in);
//   }
//
// Point-to-point calls take ranks of `g` (the world when omitted). A Proc belongs to the thread
// that runs its program; using it from any other thread is an error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <span>
#include <vector>

#include "touchstone/group.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/time.hpp"

namespace touchstone {

inline constexpr int any_source = -1;
inline constexpr int any_tag = -1;

/// What a completed receive (or a probe) found: source rank in the call's group, tag, size and
/// the virtual time the message's last packet arrived.
struct Status {
  int source = -1;
  int tag = -1;
  std::size_t size = 0;  ///< the message's size (more than the buffer when truncated)
  Time arrival = 0;
  bool truncated = false;  ///< irecv_truncating only: the message was longer than the buffer
};

/// A rank's messages so far (Proc::traffic): those its sends posted and its receives completed,
/// collectives' and tasks' (Proc::spawn) included, each counted once with its payload bytes.
/// Active messages (one-sided communication) are not among them.
struct Traffic {
  std::uint64_t messages_sent = 0, bytes_sent = 0;
  std::uint64_t messages_received = 0, bytes_received = 0;
};

class AmContext;
class AmFuture;
struct AmReply;

namespace detail {
struct Op;
class Engine;
struct Vp;
}  // namespace detail

/// A non-blocking operation in progress. Complete it exactly once with wait/waitall/waitany/test.
/// Destroying an uncompleted receive request is reported as an error at the end of the run.
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept;
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() {
    if (op_) release();  // inline: most Requests end completed (waitall took their operation)
  }
  /// True until the request has been completed by wait/test.
  bool active() const { return op_ != nullptr; }

 private:
  friend class Proc;
  friend class detail::Engine;  // detaches a Request that outlives its run, so it never touches the freed engine
  explicit Request(detail::Op* op);
  void release();  // gives an operation not yet completed back to its engine (Engine::drop)
  detail::Op* op_ = nullptr;
};

/// A virtual processor, as seen by its program.
class Proc {
 public:
  /// The Proc of the VP whose program is running on the calling thread (or fiber), nullptr
  /// outside a run's VP code. For libraries that cannot be handed the Proc, such as the MPI
  /// interface (mpi/), whose C functions take no Proc argument.
  static Proc* current();

  // --- identity and machine ---
  int rank() const;
  int size() const;
  const Machine& machine() const;
  /// The run's seed (for algorithms that draw random choices; never host randomness).
  std::uint64_t seed() const;
  /// Number of links between two world ranks on the machine's route.
  int hops(int from, int to) const;
  /// True when this run carries sizes only (RunOptions::phantom_payloads): the runtime reads no
  /// byte of a send buffer and writes none into a receive buffer.
  bool phantom_payloads() const;
  /// State that all VPs of this run share, for libraries that keep one object per run rather than
  /// one per VP: the slot of `key` (an address the library owns, such as one of its static
  /// variables, so that two libraries never meet), empty until a VP fills it. The run destroys what
  /// the slots hold when it ends; two runs never share a slot, even concurrent ones. VPs run one at
  /// a time (docs/model.md 1.1), so VP code may use a slot without locks, but an object in it must
  /// stay valid for every VP that still uses it.
  std::shared_ptr<void>& run_local(const void* key);
  /// For a library layered on the Proc (the MPI interface) before code of its own that touches
  /// state it shares with other VPs (run-wide tables, another VP's records): returns when this VP's
  /// code runs in the sequential order. While the programs of an instant run at once on several
  /// host cores (RunOptions::host_cores, docs/parallel.md), a VP whose program runs ahead waits
  /// here for its turn, as at every call into the runtime; otherwise it returns at once. Free in
  /// virtual time and leaves no trace: a run is the same with or without it, only safe.
  void await_turn();
  /// For a library layered on the Proc that checks some calls only at a split run's window's end
  /// (RunOptions::window_failure, docs/parallel.md): marks this point of the VP's turn, before the
  /// call does anything, and returns the mark for WindowFailure::mark, which cuts the run here if
  /// the call is found to fail. Free in virtual time and leaves no trace; 0 in a run in one process.
  std::uint32_t mark();

  /// Names where the program is, for deadlock and race reports: this VP's later calls are reported
  /// "at FILE:LINE note" (the caller's file and line) until the next annotate. Free in virtual time.
  void annotate(std::string_view note = {}, std::source_location where = std::source_location::current());
  /// The current annotation ("" before the first).
  const std::string& annotation() const;
  /// This rank's messages sent and received so far (its tasks' included). Free in virtual time.
  Traffic traffic() const;
  /// The number of the last receive or probe this VP posted, as race reports and forced schedules
  /// give it (Race::call, RANK:CALL=SOURCE); 0 before the first. A rank's tasks count in the same
  /// numbering, so this is the only exact way to learn it after the call.
  std::uint64_t last_receive_call() const;

  // --- virtual time ---
  /// This VP's clock.
  Time now() const;
  /// Advances this VP's clock by dt of local computation.
  void compute(Time dt);
  /// Charges this VP the machine's time for copying `bytes` bytes of local memory in `pieces`
  /// contiguous pieces (combining or extracting blocks of messages): bytes * copy_per_byte +
  /// pieces * copy_per_piece (docs/model.md 2.11; 0 on machines that set neither). The copy
  /// itself is the caller's; this only advances the clock.
  void local_copy(std::size_t bytes, std::size_t pieces = 1);
  /// Ends this VP's part in the emulation here, exactly as if its program returned now: its finish
  /// time is its clock. The rest of the program runs after the emulation has ended, on up to
  /// RunOptions::host_cores host threads at once (the VPs that left in the order they left, one
  /// after another, on one): code that checks results and frees buffers, which then costs no turn
  /// of the sequential engine. It may use its own memory, rank(), size() and machine(); any other
  /// call fails the run with a usage error. An exception it throws fails the run as the
  /// program's would (the first, in the order the VPs left, is reported), but only after the
  /// emulation has ended. Not inside a task (spawn).
  void leave();
  /// Waits outside the emulation until another VP starts this one (start) and returns true, its
  /// clock then the starter's; returns false when the emulation ends first. Meanwhile the VP is
  /// neither running nor blocked: the run ends without it, a deadlock report leaves it out, and a
  /// run in which no VP starts it is the run in which its program returned at once (same events,
  /// trace and trace_hash). For programs that start processes during a run (MPI_Comm_spawn). A VP
  /// started may wait again once its work is done, to be started anew; once the emulation is over,
  /// await_start returns false at once. Not inside a task, not in a run split over processes
  /// (RunOptions::partition).
  bool await_start();
  /// Starts VP `rank`, which waits in await_start (or has not yet made its first call and will
  /// make it there), at this VP's clock.
  void start(int rank);

  // --- point-to-point (docs/model.md 2.5) ---
  /// Returns when the message's last packet has left this node (the buffer may be reused).
  void send(int dst, int tag, std::span<const std::byte> data, const Group& g = {});
  Request isend(int dst, int tag, std::span<const std::byte> data, const Group& g = {});
  /// Synchronous send (MPI_Issend): completes when the message's last packet has left this node
  /// and the destination has matched it with a receive, whichever is later. The acknowledgement
  /// is not a modeled message: the sender learns of the match at the match's virtual time.
  Request issend(int dst, int tag, std::span<const std::byte> data, const Group& g = {});
  /// Inter-level multicast (paper 001 section 3.1; docs/model.md 2.11), on a machine with the
  /// hardware (`hpam:...,multicast`): one message, one set-up cost, one worm that forks at the first
  /// replicating router on its way onto all of that router's outgoing inter-level channels. `dsts`
  /// (ranks of g) names one destination below each of them, all at the same distance (for HPAM: one
  /// row of the level below, one in each child's column); each receives an ordinary message.
  /// UsageError for any other set, or on a machine without the hardware. Returns like send.
  void multicast(std::span<const int> dsts, int tag, std::span<const std::byte> data, const Group& g = {});
  Request imulticast(std::span<const int> dsts, int tag, std::span<const std::byte> data, const Group& g = {});
  /// Blocks until a matching message is received into buf (src may be any_source, tag any_tag).
  Status recv(int src, int tag, std::span<std::byte> buf, const Group& g = {});
  Request irecv(int src, int tag, std::span<std::byte> buf, const Group& g = {});
  /// As irecv, but a message longer than buf is not an error: buf receives its first buf.size()
  /// bytes and the Status says `truncated` with the message's full size (MPI's receive, whose
  /// caller reports MPI_ERR_TRUNCATE). irecv and recv throw UsageError instead.
  Request irecv_truncating(int src, int tag, std::span<std::byte> buf, const Group& g = {});
  Status wait(Request& r);
  /// Completes every request, in the order they become complete; statuses in request order.
  std::vector<Status> waitall(std::span<Request> rs);
  /// As above, with the statuses written into `statuses` (one per request), or not at all when it
  /// is empty (as MPI_STATUSES_IGNORE): no allocation, for a loop that completes a few requests
  /// per step. UsageError for any other number of statuses.
  void waitall(std::span<Request> rs, std::span<Status> statuses);
  /// Completes the first request to become complete and returns its index.
  std::size_t waitany(std::span<Request> rs, Status* status = nullptr);
  /// Completes r if it is complete at this VP's current time.
  bool test(Request& r, Status* status = nullptr);
  /// Withdraws the receive r if no message has matched it by this VP's current time (decided as
  /// test decides: the event loop first catches up with the clock), and returns true: r is then
  /// inactive, and a later message goes to another receive or waits as unexpected. False when it
  /// has matched (r completes as usual) and for every send: a message handed to the network is
  /// not taken back. Free in virtual time.
  bool cancel(Request& r);
  /// Blocks until a matching message has arrived; does not receive it.
  Status probe(int src, int tag, const Group& g = {});
  std::optional<Status> iprobe(int src, int tag, const Group& g = {});
  Status sendrecv(int dst, int send_tag, std::span<const std::byte> data, int src, int recv_tag,
                  std::span<std::byte> buf, const Group& g = {});

  // --- barrier (docs/model.md 6): hardware or software as the machine says ---
  void barrier(const Group& g = {});

  // --- tasks (docs/model.md 1.7) ---
  /// Runs task(instance) on this VP's behalf, concurrently with its program, and returns the
  /// request that completes when it returns (wait, test, waitall and waitany take it like any
  /// other). The task is this rank acting on its own (same rank, same mailbox): Proc::current()
  /// inside it is this Proc, and every call it makes acts for the task. Its virtual clock starts
  /// at this VP's clock and its sends, receives and computation advance its own clock, not the
  /// program's: a progress engine beside the program's CPU. Every member of `scope` must spawn on
  /// it in the same order (as MPI collectives on a communicator): the n-th spawn on `scope` gets,
  /// on every member, the same `instance` (scope's members with a context of their own), and the
  /// task's world (the default group) is a copy of the world with a context of its own, so that
  /// messages of concurrent tasks never match each other's or the program's. Free in virtual time.
  Request spawn(const Group& scope, std::function<void(const Group& instance)> task);
  /// As above; `describe` names the task in the program's own terms for deadlock reports
  /// ("MPI_Ibcast(count=1, MPI_INT, root=0) on MPI_COMM_WORLD at prog.c:12"), asked only when one
  /// is written.
  Request spawn(const Group& scope, std::function<void(const Group& instance)> task,
                std::function<std::string()> describe);

  // --- active messages and remote atomics (docs/model.md 7): touchstone/active_messages.hpp ---
  /// Registers this VP's handler `id` (0 <= id < 2^26); register before anyone can send to it.
  void am_register(int id, std::function<void(AmContext&)> handler);
  /// Registers this VP's word `id` for remote atomics; word() reads and writes it locally, free.
  void register_word(int id, std::int64_t initial = 0);
  std::int64_t& word(int id);
  /// A one-way active message: the handler must not reply. Returns after the send overhead.
  void am_send(int dst, int handler, std::span<const std::int64_t> args, std::span<const std::byte> payload = {});
  /// A request whose handler must reply once; the reply may carry up to reply_capacity bytes.
  AmFuture am_request(int dst, int handler, std::span<const std::int64_t> args,
                      std::span<const std::byte> payload = {}, std::size_t reply_capacity = 0);
  AmReply am_wait(AmFuture& f);
  bool am_test(AmFuture& f, AmReply* reply = nullptr);
  /// Remote atomics on word `word` of world rank `dst`; each returns the word's old value.
  std::int64_t test_and_set(int dst, int word);
  std::int64_t swap(int dst, int word, std::int64_t value);
  std::int64_t compare_exchange(int dst, int word, std::int64_t expected, std::int64_t desired);
  std::int64_t fetch_add(int dst, int word, std::int64_t value);
  AmFuture itest_and_set(int dst, int word);
  AmFuture iswap(int dst, int word, std::int64_t value);
  AmFuture icompare_exchange(int dst, int word, std::int64_t expected, std::int64_t desired);
  AmFuture ifetch_add(int dst, int word, std::int64_t value);
  /// Completes a non-blocking atomic and returns the old value.
  std::int64_t atomic_wait(AmFuture& f);

  // --- groups (docs/model.md 5) ---
  /// The world group of this run.
  Group world() const;
  /// An explicit, ordered list of world ranks. Creating a group costs no virtual time; every
  /// member must create the same groups in the same order (as with MPI communicators).
  Group group(std::vector<int> world_ranks);
  /// group(the world ranks of `like`): a group of the same members, in the same order, with a
  /// context of its own. It costs no pass over the members, where group() checks and hashes them.
  Group group_like(const Group& like);
  /// Members of `parent` picked by their ranks in parent, in that order.
  Group subgroup(const Group& parent, const std::vector<int>& parent_ranks);
  /// The same, counted apart for each key: the n-th such group with this key of each member is the
  /// same group, whatever groups with other keys each member made before it (so two ranks that
  /// make one group per tag agree on each tag's, in whatever order the tags come).
  Group subgroup(const Group& parent, const std::vector<int>& parent_ranks, std::uint64_t key);
  /// Collective over parent, with real messages: the members with the same color, ordered by
  /// (key, parent rank). A negative color returns an empty group.
  Group split(const Group& parent, int color, int key);
  /// 2-D mesh helpers (rows x columns, row-major ranks). Error on other topologies.
  Group mesh_row(int row);
  Group mesh_column(int column);
  /// A rectangular sub-mesh, members in row-major order, or in snake order (even rows left to
  /// right, odd rows right to left) when `snake` is true.
  Group submesh(int row0, int col0, int rows, int cols, bool snake = false);
  /// One half of a sub-mesh in snake order: half 0 holds the first ceil(n/2) processors.
  Group snake_half(int row0, int col0, int rows, int cols, int half);

  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

 private:
  friend class detail::Engine;
  Proc(detail::Engine& e, detail::Vp& v) : e_(e), v_(v) {}
  AmFuture atomic_request(int dst, int builtin, std::span<const std::int64_t> args);
  detail::Vp& self() const;  // the VP acting now: v_, or the task of v_'s rank that is running
  detail::Engine& e_;
  detail::Vp& v_;
};

}  // namespace touchstone
