// Running an SPMD program on an emulated machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"
#include "touchstone/proc.hpp"
#include "touchstone/time.hpp"

namespace touchstone {

using Program = std::function<void(Proc&)>;

/// How VPs get the host CPU. Either way exactly one VP runs at a time and results are identical.
enum class Execution {
  fibers,   ///< user-level threads (Boost.Context): a VP switch costs about 100 ns
  threads,  ///< one OS thread per VP, handing a baton through semaphores: tens of microseconds
};

/// Race detection for receives and probes with any_source or any_tag (docs/debugging.md).
enum class RaceCheck {
  off,     ///< no vector clocks are kept
  report,  ///< RunResult::races lists every race
  error,   ///< as report, and a run with a race ends in a RunError listing them
};

/// A forced match (docs/debugging.md, "Exploring"): the wildcard receive or probe number `call`
/// of world rank `rank` takes the next matching message from world rank `source`.
struct ForcedMatch {
  int rank = 0;
  std::uint64_t call = 0;
  int source = 0;
  friend bool operator==(const ForcedMatch&, const ForcedMatch&) = default;
  friend auto operator<=>(const ForcedMatch&, const ForcedMatch&) = default;
};

/// "RANK:CALL=SOURCE,..." (e.g. "0:1=2"), the choice vector that --schedule replays. UsageError
/// on anything else.
std::vector<ForcedMatch> parse_schedule(const std::string& text);
std::string format_schedule(const std::vector<ForcedMatch>& schedule);

struct Race;

/// One emulation split over several processes (docs/parallel.md, "Several processes"): process k
/// of n runs the programs of the ranks [k N / n, (k + 1) N / n) of the machine's N and a copy of
/// the whole network, and the processes meet to swap the messages handed over in a window, which
/// ends the machine's least send set-up after the earliest time a VP of any process may act. The
/// run is the single process's: the same message ids, times and trace_hash. `--distributed`
/// (cli/distributed.cpp) implements it over Open MPI; a test may use threads.
class Partition {
 public:
  virtual ~Partition() = default;
  virtual int index() const = 0;  ///< this process: 0 .. count() - 1
  virtual int count() const = 0;
  /// Collective: every process's bytes, concatenated in the order of the processes, to every one.
  virtual std::vector<std::byte> all_gather(std::span<const std::byte> mine) = 0;
  /// Collective: `mine` holds this process's part for each process in turn, `to[k]` bytes for
  /// process k; returns the parts the processes have for this one, `from[k]` bytes from process k,
  /// concatenated in the order of the processes. Every process knows every size (a split run's
  /// window says them). The default gathers every part to every process and keeps its own; one that
  /// sends each part to its process alone (MPI_Alltoallv) moves less.
  virtual std::vector<std::byte> all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                            std::span<const std::size_t> from);
  /// A split run's process puts a window's payloads in the all-gather, after their records, when they
  /// come to no more than this many bytes (one exchange per window rather than two), and sends them
  /// to their destinations' processes alone (all_to_all) otherwise. With two processes they always
  /// go in the all-gather, which then sends them to their destination's process alone anyway.
  virtual std::size_t payloads_inline_up_to() const { return std::size_t{64} << 10; }
  /// The ranks whose programs process k runs on a machine of `nodes`: [first, end).
  static std::pair<int, int> ranks_of(int k, int count, int nodes) {
    const auto at = [&](int j) { return static_cast<int>(static_cast<std::int64_t>(nodes) * j / count); };
    return {at(k), at(k + 1)};
  }
  std::pair<int, int> ranks_here(int nodes) const { return ranks_of(index(), count(), nodes); }
};

struct RunOptions {
  Execution execution = Execution::fibers;
  std::uint64_t seed = 1;         ///< seed of every random choice the model or algorithm makes
  std::uint64_t perturb = 0;      ///< nonzero: seeded random host delays in VP threads
  bool phantom_payloads = false;  ///< sizes only: no payload bytes are stored or copied
  std::string trace_file;         ///< Chrome Trace Event JSON (Perfetto)
  std::string order_log_file;     ///< plain-text per-VP message order
  Time time_limit = milliseconds(3'600'000);  ///< virtual time after which the run is an error
  /// Host stack of each VP (address space: only the pages its calls reach become memory). 128 KiB,
  /// Boost.Context's own default, is twice what any catalog algorithm needs; a VP that overflows
  /// it is stopped with a message naming its rank. Larger stacks cost many-VP runs dearly: each
  /// stack's top page needs the page-table page of its 2 MiB of address space, and a 65,536-VP ring
  /// took 1.6-2x as long with 1 MiB stacks (docs/performance.md, "Fiber stacks"). MPI programs,
  /// whose main runs on it, get 1 MiB (program_run_options in touchstone/mpirun.hpp).
  std::size_t stack_bytes = std::size_t{128} << 10;
  /// Host cores the run may use (docs/parallel.md). Fibers: with more than one, the VPs' first
  /// turns (their programs up to the first call into the runtime: buffers allocated and filled)
  /// run ahead in parallel on that many host threads, and so do the programs of the VPs that one
  /// instant lets go on (parallel_programs_from_us) and the rests of the programs that left the
  /// emulation (Proc::leave); 1: one host thread; 0 (the default): every core the process may
  /// use (available_host_cores(): its affinity and cgroup quota), as on the command line. A
  /// program must then touch only its VP's memory between two calls into the runtime (or take its
  /// turn first: Proc::await_turn). Threads: the VP threads are pinned to the first n cores the
  /// process may use (0, or all of them: no pinning). Results are identical for every value.
  int host_cores = 0;
  /// With fibers on more than one host core: the programs of the VPs that one instant lets go on
  /// run at once on host_cores threads, each from where the call it waited in returns up to its
  /// next call into the runtime (docs/parallel.md, "The programs of an instant"), while the running
  /// mean of such a program's host time is at least this many host microseconds: below that,
  /// handing the VPs to other threads and back costs more than it saves. 0: at every instant that
  /// lets two or more go on. The same threshold lets a program that waits for a send of its own
  /// run on past the wait on another host thread while the event loop goes on, up to its next
  /// call, which it makes when the send completes ("Programs that go on past their sends"). And
  /// the first turns and the rests are handed out to other threads only once a timed sample of 64
  /// of them has taken 64 times this long ("Run-ahead start"). Results are identical for every value.
  double parallel_programs_from_us = 10;
  /// The programs never read Status::arrival (`touchstone mpirun` sets it: an MPI_Status has no
  /// such field). Then a program that waits for one receive whose message is known and copied into
  /// its buffer before it arrives may run on past the wait as past its sends, under the same
  /// threshold ("Programs that go on past their receives"); the Status it gets has arrival 0.
  bool programs_read_no_arrival = false;
  /// Deadlock reports include the runtime's own internal messages (a software barrier's or a
  /// split's) instead of naming the collective.
  bool report_internal = false;
  RaceCheck races = RaceCheck::off;
  /// Forced matches at wildcard receives and probes; every entry must name one (else UsageError).
  std::vector<ForcedMatch> schedule;
  /// RunResult::explanation: the channels with the most blocked time and the longest waits of
  /// worms' headers, each with the chain of worms in its way (docs/debugging.md).
  bool explain = false;
  /// Overrides the machine's NetworkParams::eager_limit for this run (docs/model.md 2.16; CLI
  /// --eager-limit): bytes, NetworkParams::kNoFlowControl (off) or INT64_MAX (only the buffer decides).
  std::optional<std::int64_t> eager_limit;
  /// Called on a VP's own thread (or fiber) each time it gives up the host CPU: when it blocks and
  /// when its program ends. For tools that attribute process-wide state to VPs (`touchstone mpirun
  /// --tag-output` flushes stdout there and prefixes what it finds with the rank). It must not
  /// call the Proc, and it cannot change the run's results. If it throws, the run fails (RunError
  /// naming the rank) as if the VP's program had thrown.
  std::function<void(int rank)> on_vp_pause;
  /// Called on a VP's own thread (or fiber) each time it gets the host CPU back: when its program
  /// starts and when a blocking call resumes, with the virtual time of the event that woke it.
  /// Between it and the next on_vp_pause the VP runs one segment of its code (RunStats::batches;
  /// `bench/batch_widths --host-time` times them). The same rules as on_vp_pause.
  /// `place` is the turn's place among the turns at `now`, for a layer that merges what the turns
  /// of a split run's processes did (`touchstone-distributed mpirun`: the ranks' output): by time,
  /// then place, the sequential order (turns of one process at one place: in the order of its
  /// hooks). Rank r's turn comes before rank r + 1's, and a turn that its instant woke (a task of
  /// the rank's completed the request it waited for) after the turn that woke it. Exact in a split
  /// run (RunOptions::partition); in one process the hooks' own order is the sequential order, and
  /// the place is the context's own (as if no turn were woken at its instant).
  std::function<void(int rank, Time now, std::uint64_t place)> on_vp_resume;
  /// Called by the event loop when a run fails while a VP's program had run ahead of its turn
  /// (host_cores): past a wait for its own send (docs/parallel.md, "Programs that go on past their
  /// sends"), or among the programs of an instant, after the VP whose turn failed. What that
  /// program did since its last on_vp_pause never happened in the sequential order, so a tool that
  /// holds a VP's effects until its pause drops them (`touchstone mpirun` drops the rank's output).
  /// The same rules as on_vp_pause.
  std::function<void(int rank)> on_vp_discard;
  /// The hooks above touch only what belongs to the VP they name (`touchstone mpirun` keeps
  /// each rank's output apart and writes it out at the rank's pauses), so VP code may run on
  /// several host threads at once beside them (host_cores). False: set hooks hold every run to
  /// one VP's code at a time. Either way they are called only in the sequential order's turns,
  /// except on_vp_resume at a program's start when it runs ahead.
  bool hooks_are_per_vp = false;
  /// Host seconds without progress (no VP calling the runtime, no event handled) after which the
  /// run is ended: the VP then running is named with its symbolized stack, the trace and order log
  /// are written up to that point, before_hard_exit is called and the process exits with status 2
  /// (the VP's own code cannot be unwound). 0: no limit. Host time: the run's results never
  /// depend on it, only whether it ends.
  double wall_limit_s = 0;
  /// SIGINT and SIGTERM end the run as a failure (RunError "interrupted by SIGINT ...", evidence
  /// written); a VP spinning in its own code is stopped as by wall_limit_s, two seconds later,
  /// with exit status 128 + the signal. The handlers are installed for the run only.
  bool stop_on_signals = false;
  /// A progress line on stderr, once a second after the first three, when stderr is a terminal:
  /// virtual time reached, messages, host seconds.
  bool progress_line = false;
  /// Called on the watchdog's thread just before it ends the process (wall_limit_s, a signal the
  /// VPs did not answer), with the rank that was running (-1: none) and the exit status the process
  /// is about to end with: flush what the tool holds.
  std::function<void(int running_rank, int exit_status)> before_hard_exit;
  /// With race detection on: called once as the run ends, however it ends (completed, failed, or
  /// refused with a RunError), with every race found up to then, so that exploration can go on
  /// from a failed run too (touchstone/explore.hpp).
  std::function<void(const std::vector<Race>& races)> on_races;
  /// Several processes run this emulation together, each its share of the ranks (Partition).
  /// Only some runs can be split so far; the others are refused with a UsageError that says why
  /// (docs/parallel.md, "Several processes").
  std::shared_ptr<Partition> partition;
  /// In a split run, what a layer above the runtime must tell the other processes about this
  /// process's ranks (an MPI layer's record of each message's type signature, for the receiver's
  /// check). At every window's end `window_notes` gives this process's bytes, on the event loop's
  /// thread, and `on_window_notes` gets each other process's, before the window's messages reach the
  /// network: what a rank noted in a window is known everywhere before any message it sent in that
  /// window can arrive. Unset: nothing is told.
  /// A process whose run failed in the window gives its notes too: what its ranks did before the
  /// failure.
  std::function<std::vector<std::byte>()> window_notes;
  std::function<void(int process, std::span<const std::byte> notes)> on_window_notes;
  /// A failure that a layer above finds only once every process's notes of a window are known (the
  /// MPI layer compares collective calls whose members entered in different processes): the turn of
  /// `rank` at `at` (at `place` among that instant's, as on_vp_resume gave it) failed as if its
  /// program had thrown UsageError(`what`) there, its clock at `clock`. Asked at every window's end
  /// after on_window_notes, in every process, which must all answer alike; the run fails there
  /// unless a failure earlier in the sequential order (docs/model.md 1.3) ended it first (another
  /// failure of that turn came after the call). Unset or nullopt: none.
  /// `mark`: what Proc::mark returned at the call, so that every process takes back what the turn did
  /// from the call on and the run's hash, trace and order log are the single process's; 0 (none):
  /// each process keeps its share of the run up to where it stopped (RunError::hash_of_shares).
  struct WindowFailure {
    Time at = 0;
    int rank = 0;
    Time clock = 0;
    std::string what;
    std::uint32_t mark = 0;
    std::uint64_t place = 0;  ///< 0: the rank's own place (a turn that no other woke at its instant)
  };
  std::function<std::optional<WindowFailure>()> window_failure;
  /// VPs 0..ranks-1 run the program's ranks; the others are idle (an MPI run with -np below the
  /// machine's VPs) and deadlock reports do not count them as finished ranks. 0: every VP.
  int ranks = 0;
  /// For deadlock reports: the call of the program's own interface a blocked VP is in (such as
  /// "MPI_Send"), named before the runtime's description of its wait. Empty: nothing is added.
  std::function<std::string(int rank)> blocked_in;
  /// For deadlock reports in the terms of the program's own interface (MPI): the whole description
  /// of the call a blocked rank is in ("MPI_Recv(source=0, tag=7, MPI_COMM_WORLD) at prog.c:9"),
  /// given the sends and receives it still waits for. When it answers, its text replaces the
  /// runtime's (and blocked_in's); empty: the runtime's description.
  struct PendingOp {
    bool send = false;
    int peer = any_source;  ///< world rank of the destination or source, or any_source
    int tag = any_tag;
    std::uint64_t context = 0;  ///< the group's (Group::context)
  };
  std::function<std::string(int rank, const std::vector<PendingOp>& waits_for)> describe_blocked;
  /// For deadlock reports: a message no receive took, in the program's terms ("a message from rank 0
  /// to rank 1 on MPI_COMM_WORLD, tag 8, 16 bytes"). Of the `queued` messages of the same sender,
  /// tag and context waiting at the receiver, `earlier` are ahead of it. Empty: the message is the interface's
  /// own (a collective's) and is left out of the report. Unset: the runtime's description.
  struct UnreceivedMessage {
    int src = 0, dst = 0, tag = 0;  ///< world ranks
    std::uint64_t context = 0;
    std::size_t bytes = 0;
    int earlier = 0, queued = 1;
  };
  std::function<std::string(const UnreceivedMessage& m)> describe_message;
  /// For deadlock reports: what a rank that finished while others wait for it left behind that may
  /// say why, in the program's terms (the last error an MPI call returned to it). The report adds
  /// "rank N finished: " and the text; empty or unset: nothing.
  std::function<std::string(int rank)> describe_finished;
  /// For race reports: one race's paragraph in the program's terms (the call that received, its
  /// communicator's ranks); empty or unset: the runtime's ("rank 1 receive #1 (recv(...))").
  std::function<std::string(const Race& race)> describe_race;
};

/// A message that could also have matched a wildcard receive or probe.
struct RaceAlternative {
  std::uint64_t message = 0;  ///< its id
  int source = 0;             ///< world rank of its sender
  int tag = 0;
  Time arrival = 0;           ///< its last packet arrived
  Time margin = 0;            ///< by how much it lost: arrival - the taken message's arrival
};

/// A receive or probe with any_source or any_tag whose match was decided by timing.
struct Race {
  int rank = 0;               ///< the VP (world rank)
  std::uint64_t call = 0;     ///< the VP's receive/probe call number, from 1
  bool probe = false;
  bool forced = false;        ///< RunOptions::schedule chose its match (listed even without alternatives)
  Time posted = 0;            ///< the receive was posted (the probe called) at this virtual time
  std::string label;          ///< the VP's Proc::annotate at the call
  int want_source = -1;       ///< the pattern: world rank or any_source
  int want_tag = -1;          ///< tag or any_tag
  std::uint64_t context = 0;  ///< the group's (Group::context) the receive or probe named
  std::uint64_t message = 0;  ///< the message it took
  int source = 0;             ///< world rank of that message's sender
  int tag = 0;
  Time arrival = 0;
  std::vector<RaceAlternative> alternatives;  ///< in arrival order
  /// The race in the program's terms (RunOptions::describe_race), given where it was found: in a
  /// split run, by the process that runs its rank. Empty: describe_races uses the runtime's words.
  std::string described;
};

/// One paragraph per race and a summary line ("N race(s) at M wildcard receive(s)"): the race's own
/// `described` paragraph, else `describe`'s (RunOptions::describe_race), else the runtime's words.
std::string describe_races(const std::vector<Race>& races,
                           const std::function<std::string(const Race&)>& describe = {});

/// How many VPs resume at one virtual time (docs/parallel.md, stage 1): the code of VPs resumed at
/// the same time could run concurrently with the same results, so these bound what running VP code
/// on several host cores could gain.
struct BatchStats {
  static constexpr std::size_t kCoreCounts = 4;
  static constexpr int kCores[kCoreCounts] = {2, 4, 8, 16};
  std::uint64_t segments = 0;  ///< VP resumptions: each runs the VP's code up to its next blocking call
  std::uint64_t instants = 0;  ///< distinct virtual times at which VPs resumed
  std::uint64_t widest = 0;    ///< most VPs resumed at one time
  /// For W = kCores[i]: the sum over instants of ceil(width / W), the rounds W cores would need
  /// when every segment costs the same; segments / rounds[i] bounds their speed-up on VP code.
  std::uint64_t rounds[kCoreCounts] = {};
};

struct RunStats {
  std::uint64_t messages = 0;
  std::uint64_t packets = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t blocked_headers = 0;  ///< times a header found a channel busy
  Time blocked_time = 0;              ///< sum over headers of the time spent waiting for channels
  std::uint64_t events = 0;           ///< engine events processed
  BatchStats batches;
};

struct RunResult {
  Time makespan = 0;              ///< largest final VP clock
  std::vector<Time> finish_time;  ///< final clock of each VP
  std::vector<std::uint64_t> sent;  ///< messages each VP sent (its message set-ups), barriers included
  std::uint64_t trace_hash = 0;   ///< hash of the canonical event log
  RunStats stats;
  std::vector<Race> races;        ///< RunOptions::races: every race found
  /// RunOptions::races: per VP, a digest of every message it received (source, tag, bytes), in order.
  std::vector<std::uint64_t> received;
  std::string explanation;        ///< RunOptions::explain
  double host_seconds = 0;
  /// Instants whose programs ran at once on several host threads (RunOptions::
  /// parallel_programs_from_us): how the host ran it, not what happened (0 on one host core).
  std::uint64_t instants_at_once = 0;
  /// Waits for a send of the program's own, or for a receive whose message was known before it
  /// arrived (RunOptions::programs_read_no_arrival), past which its program ran on, on another
  /// host thread, before the wait completed (the same threshold): also the host's doing (0 on one
  /// host core).
  std::uint64_t continued_ahead = 0;
  /// Messages of 4 KiB or more whose bytes went into their receive's buffer before they arrived,
  /// where the match became certain (docs/parallel.md, "Copies made when the match is known"): how
  /// the host moved the bytes, decided in the sequential order (the same on any number of host
  /// cores).
  std::uint64_t delivered_early = 0;
  /// A split run (RunOptions::partition): how many times its processes met to swap a window's
  /// messages, the same in every process and on any host (docs/parallel.md, "Several processes");
  /// 0 in one process.
  std::uint64_t windows = 0;
};

/// The host cores this process may use: its CPU affinity, capped by its cgroup's CPU quota
/// (cgroup_limits().cpus, rounded up: 2.5 CPUs allow 3 cores).
int available_host_cores();

/// This process's cgroup limits: the paths of `proc_self_cgroup` resolved under `cgroup_root`
/// (cgroup v2's unified hierarchy, or v1's memory and cpu controllers), each limit the smallest on
/// the way from the process's cgroup up to the root, since a parent's limit binds its children
/// too. 0 where there is none (no cgroup, "max", v1's -1 or its "no limit" near 2^63).
struct CgroupLimits {
  std::size_t memory_bytes = 0;  ///< v2 memory.max, v1 memory.limit_in_bytes
  double cpus = 0;               ///< v2 cpu.max, v1 cpu.cfs_quota_us: the quota over its period
};
CgroupLimits cgroup_limits(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                           const std::string& cgroup_root = "/sys/fs/cgroup");

/// The host's folder for temporary files: $TMPDIR, else /tmp. Throws UsageError, naming it and
/// saying whether it came from $TMPDIR, when it is not a folder.
std::string host_temporary_folder();
/// A new folder of this process's own in host_temporary_folder(), named `prefix` and six random
/// characters; the caller removes it. Throws UsageError, naming the folder, when it cannot be made.
std::string make_temporary_folder(const std::string& prefix);

/// The memory mappings this process holds and the most Linux lets it hold (vm.max_map_count).
/// VPs' stack guards may cost mappings, and so does each copy of a privatized MPI program.
struct ProcessMappings {
  std::size_t in_use = 0;    ///< lines of /proc/self/maps
  std::size_t limit = 65530;  ///< vm.max_map_count (the kernel's default if it cannot be read)
};
ProcessMappings process_mappings();

/// Runs `program` on every VP of `machine`. Throws RunError (deadlock, exception in VP code,
/// unreceived messages, time limit) or UsageError (API misuse) with a full report.
RunResult run(const Machine& machine, const Program& program, const RunOptions& options = {});

}  // namespace touchstone
