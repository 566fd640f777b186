// The MPI interface's state (docs/mpi.md): one RankState per MPI process, reached from the C
// functions through Proc::current(). Internal to libtouchstone_mpi.so.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mpi.h"
#include "touchstone/proc.hpp"

namespace touchstone::mpi {

/// An MPI error, raised inside an MPI function and handed to the communicator's error handler.
struct MpiError {
  int code;
  std::string what;
};

/// MPI_Abort, unwinding the calling rank; the run ends with the error code as its exit status.
struct AbortRequested : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An info object's (key, value) pairs in the order their keys were first set (MPI_Info_get_nthkey).
using InfoPairs = std::vector<std::pair<std::string, std::string>>;
struct ProcessTopology;  // topology.hpp
struct AttachedBuffer;

struct Comm {
  Group pt2pt;       ///< point-to-point messages
  Group coll;        ///< collectives: a context of their own, so they never match user messages
  int rank = 0, size = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  bool world_identity = false;  ///< members are the machine's ranks 0..nodes-1 in order
  std::optional<std::string> name;  ///< MPI_Comm_set_name; unset: the standard name or ""
  InfoPairs info;                   ///< MPI_Comm_set_info / MPI_Comm_dup_with_info hints
  // An intercommunicator's pt2pt and coll groups hold both groups, this side's from `local_base`
  // and the other side's from `remote_base`; `rank` and `size` are the local group's, and peer
  // ranks name the remote group. `local_comm` is a hidden intracommunicator of this side alone,
  // on which the intercommunicator's collectives run their local phases.
  bool inter = false;
  int remote_size = 0;
  int local_base = 0, remote_base = 0;
  MPI_Comm local_comm = MPI_COMM_NULL;
  /// Ranks a point-to-point call may name: the remote group's on an intercommunicator.
  int peers() const { return inter ? remote_size : size; }
  /// The pt2pt group's rank of peer rank r (r >= 0), and back.
  int peer_to_group(int r) const { return r + remote_base; }
  int group_to_peer(int g) const { return g - remote_base; }
  /// Cartesian, graph or distributed-graph topology (topology.hpp); null for none. Shared by duplicates.
  std::shared_ptr<const ProcessTopology> topology;
  // Checking programs (check.hpp): how the communicator was made, for reports ("MPI_Comm_split of
  // MPI_COMM_WORLD, color 1"), and the collectives this rank has entered on it, whose order the
  // members compare.
  std::string provenance;
  std::uint64_t collectives_entered = 0;
  /// MPI_Comm_attach_buffer's buffer (bsend.cpp), used by this communicator's buffered sends instead
  /// of the process's; not passed on to the communicators made from it.
  std::shared_ptr<AttachedBuffer> buffer;
  /// The session the communicator was made from (MPI_Comm_create_from_group), directly or through
  /// others; MPI_SESSION_NULL for the world model's. Its buffer serves buffered sends without one here.
  MPI_Session session = MPI_SESSION_NULL;
};

/// Where the program called an MPI function: its name and the return address into the program
/// (call.hpp), symbolized only when a report needs it.
struct CallSite {
  const char* call = nullptr;
  const void* caller = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;  ///< the communicator the call named (made handles: their provenance)
};

/// One run of a datatype's type map: `length` bytes of data at `offset` bytes from the buffer's address.
struct TypeBlock {
  MPI_Aint offset = 0;
  std::size_t length = 0;
};

struct Type;
/// Copies of a type inside another: `repeat` times `count` consecutive copies, the r-th group
/// `disp + r * stride` bytes from the element's address.
struct TypePart {
  std::shared_ptr<const Type> type;
  MPI_Aint disp = 0;
  std::size_t count = 0, repeat = 0;
  MPI_Aint stride = 0;
};

/// A datatype (MPI-3.1 4.1): the type map of one element as byte runs in type-map order (the
/// order packing follows), its type signature, and its bounds. Messages carry data bytes only:
/// a send packs the runs, a receive unpacks them (types.cpp).
struct Type {
  std::vector<TypeBlock> blocks;  ///< adjacent runs merged
  /// A type map of more runs than types.hpp's kMaxRuns is not listed in `blocks` but kept as the
  /// copies of the types it is made of; packing walks them in type-map order.
  std::vector<TypePart> parts;
  /// The type signature: the predefined types of one element in order, run-length coded
  /// (pair types appear as their two members), for MPI_Get_elements and signature checks.
  std::vector<std::pair<MPI_Datatype, std::size_t>> signature;
  std::size_t size = 0;                     ///< data bytes per element
  MPI_Aint lb = 0, extent = 0;              ///< bounds, with MPI_Type_create_resized's markers
  MPI_Aint true_lb = 0, true_extent = 0;    ///< bounds of the data itself
  bool lb_marked = false, ub_marked = false;  ///< explicit bounds, which enclosing types inherit
  std::size_t align = 1;                    ///< alignment of its strictest member (a struct's padding)
  /// The one predefined type (pair and complex types count as one) that every element is made
  /// of, for predefined reductions; MPI_DATATYPE_NULL when mixed.
  MPI_Datatype base = MPI_DATATYPE_NULL;
  std::size_t base_count = 0;  ///< base elements per element
  bool committed = true;
  // What MPI_Type_get_envelope / MPI_Type_get_contents return.
  int combiner = MPI_COMBINER_NAMED;
  MPI_Datatype handle = MPI_DATATYPE_NULL;  ///< a predefined type's own handle
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<std::shared_ptr<const Type>> inner;  ///< the types it was built from
  std::string name;
  /// A copy for pending receives and enclosing types (types.hpp shared_copy), made on first use
  /// so that a type is copied once however often it is received.
  mutable std::shared_ptr<const Type> snapshot;
  /// Checking programs (check.hpp): the hash of one element's type signature, made on first use.
  struct SignatureHash {
    std::uint64_t hash, elements, power;  ///< power: the hash's base to the elements
    bool untyped;                         ///< holds MPI_BYTE or MPI_PACKED
    std::uint64_t count = 0, count_hash = 0;  ///< the last count asked for, and its hash
  };
  mutable std::optional<SignatureHash> signature_hash;
  /// count elements occupy exactly count * size bytes from the buffer's address, in order.
  bool contiguous() const {
    return blocks.size() == 1 && blocks[0].offset == 0 && lb == 0 && static_cast<MPI_Aint>(blocks[0].length) == extent;
  }
};

struct UserOp {
  MPI_User_function* fn = nullptr;
  bool commute = true;
};

/// A run of bytes a pending operation owns (check.hpp own_buffer): its address in the program, its
/// checksum when the operation was posted or started, and where a collective wrote it instead.
struct OwnedRun {
  const void* addr = nullptr;
  std::size_t bytes = 0;
  std::uint64_t sum = 0;
  bool recv = false;            ///< a receive buffer's (else a send buffer's)
  std::ptrdiff_t offset = -1;   ///< a block of a v-form: its offset from the buffer argument; -1: the whole buffer
  std::byte* staged = nullptr;  ///< the staging copy the collective wrote, copied in at completion
};

/// A request: a runtime request in flight, or one already complete (PROC_NULL, or completed by a
/// testall that could not complete them all) with its status.
struct RankState;
struct Generalized;

struct Partitioned;  // partitioned.cpp
struct Req {
  bool recv = false;
  bool done = false;
  MPI_Status status{};
  MPI_Comm comm = MPI_COMM_NULL;
  // A non-contiguous or truncating receive lands in `staging`, then is unpacked into the user's buffer.
  std::vector<std::byte> staging;
  void* user_buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  /// The receive's datatype itself: the program may free its handle while the receive is pending.
  std::shared_ptr<const Type> recv_type;
  std::size_t message_size = 0;  ///< the received message's size (more than the buffer when truncated)
  // Persistent requests (point-to-point `*_init` and persistent collectives): MPI_Start calls
  // `start` to post the operation again into this request; an inactive persistent request is
  // `done` with an empty status and survives completion until MPI_Request_free.
  bool persistent = false;
  int peer_base = 0;  ///< the communicator's remote_base: status MPI_SOURCE = group rank - peer_base
  std::function<void(RankState&, Req&)> start;
  bool started = false;  ///< persistent: MPI_Start posted it and no completion call has seen it complete
  /// A generalized request (MPI_Grequest_start): the program's functions, complete when it says so.
  std::shared_ptr<Generalized> generalized;
  // A nonblocking or persistent collective's error, filled in by its task (icoll.cpp) when the
  // communicator's error handler lets the run go on: the completing call reports it.
  std::shared_ptr<MpiError> collective_error;
  bool collective = false;  ///< a nonblocking or persistent collective (icoll.cpp)
  /// A collective's arguments as reports print them ("count=1, MPI_INT, root=0"; empty when not
  /// described): deadlock reports name the collective a request is of with them.
  std::string collective_args;
  CallSite made_by;         ///< the call that made it, for check reports (check.hpp)
  int peer = 0, tag = 0;    ///< point-to-point: destination or source and tag as the program gave them, for reports
  /// A received message whose type signature does not match the receive's (check.hpp).
  std::shared_ptr<MpiError> signature_error;
  /// An operation this layer carries out itself (a request-based RMA operation, rma.hpp; the flush
  /// of MPI_Buffer_iflush; a partitioned send or receive, partitioned.cpp): completes it (blocking
  /// when asked) and says whether it is complete, then with its status filled in.
  std::function<bool(bool block, MPI_Status& status)> completes;
  /// A partitioned send or receive (MPI_Psend_init, MPI_Precv_init): its partitions' state.
  std::shared_ptr<Partitioned> partitioned;
  // The buffers of a nonblocking or started persistent operation that the program must not write
  // until it completes (its send buffers; under --check its receive buffers too): their runs and
  // checksums at the post or start, compared at completion (check.hpp own_buffer), the staging copy
  // a collective's receive buffers were written into meanwhile, and the error found then.
  std::vector<OwnedRun> owned;
  std::shared_ptr<std::vector<std::byte>> owned_staging;
  std::shared_ptr<MpiError> buffer_error;
  /// MPI_Isendrecv(_replace): the request is its receive, and this is its send, which the completion
  /// calls complete with it (request.hpp all_done): one handle for both, the status the receive's.
  std::unique_ptr<Req> paired_send;
  // Last, so that it is destroyed first: an uncompleted send request's message copies `staging`
  // (a packed send buffer) when the request goes (MPI_Request_free).
  Request r;
};

struct Attributes;
struct Windows;
/// MPI_Grequest_start's request: the program completes it (MPI_Grequest_complete); the completion
/// calls ask query_fn for its status; free_fn runs when it is freed (the destructor).
struct Generalized {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
  bool complete = false;
  bool freed = false;  ///< MPI_Request_free came first: the handle's slot goes at MPI_Grequest_complete
  int query_error = MPI_SUCCESS;
  Generalized() = default;
  Generalized(const Generalized&) = delete;
  Generalized& operator=(const Generalized&) = delete;
  ~Generalized() {
    if (free) free(extra_state);
  }
};

/// MPI_Buffer_attach's buffer (docs/mpi.md, "Buffered mode"): its capacity, and the buffered
/// messages still using part of it until their sends complete.
struct AttachedBuffer {
  void* addr = nullptr;
  std::size_t size = 0;
  bool automatic = false;  ///< MPI_BUFFER_AUTOMATIC: room for every message, `size` unused
  std::size_t used = 0;  ///< data + MPI_BSEND_OVERHEAD of every message in `pending`
  struct Pending {
    std::vector<std::byte> data;  ///< the message's copy: the send reads it until it completes
    std::size_t charge = 0;
    std::uint64_t seq = 0;  ///< its place among the rank's buffered messages (RankState::bsends)
    Request r;  ///< last, so that it goes first (a dropped send copies `data`)
  };
  std::deque<Pending> pending;  ///< in the order they were sent
};

/// A rank's partitioned sends to itself and receives from itself with one tag on one communicator
/// (partitioned.cpp): the n-th of each share the n-th channel, made by whichever comes first.
struct SelfChannels {
  std::vector<Group> channels;
  std::size_t sends = 0, recvs = 0;
};

/// An MPI-4 session (MPI_Session_init, session.cpp): its error handler and its info, the hints it
/// was initialized with and what was provided.
struct MpiSession {
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  InfoPairs info;
  std::shared_ptr<AttachedBuffer> buffer;  ///< MPI_Session_attach_buffer's (bsend.cpp)
};

struct ToolState;  // the tool information interface's (tool.cpp)
struct File;       // an open file's (file.cpp)
struct OpenFile;   // what the ranks of one process share of an open file (file.cpp)

/// What one MPI_Comm_spawn or MPI_Comm_spawn_multiple gave the processes it started (dynamic.cpp).
struct Spawned {
  std::vector<std::vector<std::string>> args;  ///< per command: the command, then its arguments
  std::vector<int (*)(int, char**)> mains;     ///< per child, by its rank in their MPI_COMM_WORLD
  std::vector<int> apps;                       ///< ... its command's index (MPI_APPNUM)
  std::vector<int> vps;                        ///< the processes' VPs, by their rank in their world
  std::vector<int> parents;                    ///< the spawning communicator's members (VPs), in order
  int root = 0;                                ///< the spawning root's VP
};

struct RankState {
  Proc* proc = nullptr;
  /// Partitioned communication with itself, by (communicator's collective context, tag).
  std::map<std::pair<std::uint64_t, int>, SelfChannels> partitioned_self;
  bool initialized = false, finalized = false;
  std::vector<std::optional<MpiSession>> mpi_sessions;  ///< handle = index + 1
  int sessions_open = 0;
  /// MPI may be called: between MPI_Init and MPI_Finalize, or while a session is open.
  bool usable() const { return (initialized && !finalized) || sessions_open > 0; }
  /// MPI_COMM_WORLD's and MPI_COMM_SELF's runtime groups are still to be made: MPI_Init makes their
  /// Comm records only, so that it takes no turn and a program's start runs beside the other
  /// ranks' up to its first MPI call that reaches beyond the rank; that call (state()) makes them,
  /// in the sequential order, where MPI_Init made them before.
  bool world_groups_pending = false;
  // MPI_Add_error_class/code/string (errors.cpp): the class of each added class or code (a class
  // is its own), and the strings set for codes and classes.
  std::map<int, int> added_error_class;
  std::map<int, std::string> error_strings;
  std::vector<std::unique_ptr<Comm>> comms;     ///< handle = index; 0 null, 1 world, 2 self
  std::vector<std::optional<Type>> types;       ///< derived types: handle = kFirstDerivedType + index
  std::map<MPI_Datatype, std::string> predefined_type_names;  ///< names MPI_Type_set_name gave predefined types
  /// The types MPI_Type_create_f90_integer/real/complex gave, by (combiner, p, r): one handle each.
  std::map<std::array<int, 3>, MPI_Datatype> f90_types;
  std::vector<std::optional<UserOp>> ops;       ///< user ops: handle = kFirstUserOp + index
  std::vector<std::unique_ptr<Req>> reqs;       ///< handle = index + 1
  std::vector<std::optional<std::vector<int>>> groups;  ///< world ranks; handle = kFirstGroup + index
  std::vector<MPI_Comm_errhandler_function*> errhandlers;  ///< handle = kFirstErrhandler + index
  std::vector<std::optional<InfoPairs>> infos;  ///< user info objects: handle = kFirstInfo + index
  std::shared_ptr<Attributes> attributes;  ///< keyvals and attributes (attributes.hpp)
  std::shared_ptr<AttachedBuffer> attached;  ///< MPI_Buffer_attach (a pointer: RankState stays movable)
  /// The groups made from a session's process sets, and from those groups, with their session.
  std::map<MPI_Group, MPI_Session> group_sessions;
  /// Buffered messages so far, through every buffer attached: a flush waits for those numbered below
  /// the count at its call, and not for a later buffer's.
  std::uint64_t bsends = 0;
  std::vector<std::unique_ptr<Req>> messages;  ///< MPI_Mprobe's matched messages: handle = index + 1
  std::vector<std::unique_ptr<Req>> freed_receives;  ///< active receives MPI_Request_free let go of
  std::shared_ptr<Windows> windows;  ///< one-sided communication's windows (rma.hpp), made on first use
  /// Open files (file.cpp): handle = index + 1; and the error handler of MPI_FILE_NULL, which
  /// hears of errors of MPI_File_open and MPI_File_delete (MPI-3.1 13.7: MPI_ERRORS_RETURN at first).
  std::vector<std::shared_ptr<File>> files;
  MPI_Errhandler file_null_errhandler = MPI_ERRORS_RETURN;
  // The launcher's (launch.cpp, env.cpp): the last MPI function called, for reports of how a rank
  // ended; --compute host: the host CPU time (ns) at which the rank's current burst began, -1 none;
  // MPI_Wtime calls in a row at one virtual time (a busy wait that could never end).
  const char* last_call = nullptr;
  std::int64_t burst_start_ns = -1;
  std::uint64_t wtime_streak = 0;
  Time wtime_at = -1;
  /// A split run: the time of the rank's current turn and its place among that instant's turns
  /// (RunOptions::on_vp_resume), which place its calls in the sequential order.
  Time turn_at = 0;
  std::uint64_t turn_place = 0;
  // MPI_Pcontrol's measured regions (measure.cpp): the virtual times each region began and ended
  // on this rank, in order; `region_open` while a region has begun and not ended.
  std::vector<std::pair<Time, Time>> regions;
  std::optional<Time> region_open;
  // Checking programs (check.hpp): the return address of the outermost MPI call in progress into
  // the program (call.hpp), how deep the calls are nested, the calls that made the groups, types
  // and operations still allocated (keyed by kind and handle), and requests freed while active.
  const void* caller = nullptr;
  int call_depth = 0;
  // The tool information interface (tool.cpp): its state while MPI_T_init_thread's are more than
  // MPI_T_finalize's, and the virtual time the rank spent in MPI calls (the outermost ones that
  // take the rank's turn, from entry to return), which its performance variable reads.
  std::shared_ptr<ToolState> tool;
  Time mpi_time = 0, call_began = 0;
  bool call_unsettled = false;  // mpi_time lacks the last outermost call's (settle_call_time)
  // Deadlock reports (check.hpp blocked_text): the communicator the outermost call names, and the
  // requests the rank blocks on (set only while it waits for them).
  MPI_Comm call_comm = MPI_COMM_NULL;
  std::vector<const Req*> waiting;
  /// The last error an MPI call returned to the program (MPI_ERRORS_RETURN or a handler of its
  /// own): a rank that went past it may have left others waiting (check.hpp finished_text).
  struct ReturnedError {
    CallSite site;        ///< the call that failed, its line and its communicator (none for a window's)
    std::string on;       ///< " on MPI_COMM_WORLD" as the communicator was named then, or ""
    std::string message;  ///< what was wrong, and the error class
  };
  std::optional<ReturnedError> returned_error;
  /// The calls that posted and that completed and freed each request handle (index handle - 1),
  /// until the handle is given out again: a copy of the handle used after that is named by them.
  std::vector<std::pair<CallSite, CallSite>> released;
  std::map<std::pair<char, int>, CallSite> made_by;
  std::vector<std::string> freed_active;
  /// The ports this rank has opened (MPI_Open_port), which numbers each one's name (dynamic.cpp).
  int ports_opened = 0;
  /// Its MPI_COMM_WORLD: -np's ranks, or the processes one MPI_Comm_spawn started (Spawned::vps);
  /// its rank there, the world's size, and its MPI_APPNUM (dynamic.cpp).
  int world_rank = 0, world_size = 0, appnum = 0;
  /// Started by MPI_Comm_spawn: its program, its arguments, and its parents' group (spawn.cpp).
  std::shared_ptr<const Spawned> spawned;
  MPI_Comm parent = MPI_COMM_NULL;  ///< MPI_Comm_get_parent's intercommunicator, once made
};

inline constexpr int kFirstDerivedType = 1000;
inline constexpr int kFirstUserOp = 100;
inline constexpr int kFirstGroup = 2;
inline constexpr int kFirstErrhandler = 10;
inline constexpr int kFirstInfo = 2;  ///< after MPI_INFO_NULL and MPI_INFO_ENV

struct CheckState;  // check.cpp

/// One `touchstone mpirun`: the ranks' states and the collectives chosen.
struct Session {
  int np = 0;
  std::vector<RankState> ranks;
  /// The machine's VPs beyond -np: each waits for MPI_Comm_spawn to start it (Proc::await_start;
  /// not in a split run). spawned_ranks[v - np] is VP v's state once a spawn gave it a program.
  int nodes = 0;
  int next_free = 0;       ///< the first VP no spawn has taken
  std::set<int> released;  ///< VPs below it whose spawned process has ended: free again
  /// The first spawned process, in the sequential order, whose program ended with a status not 0.
  std::optional<std::pair<int, std::string>> spawned_failure;
  std::vector<std::unique_ptr<RankState>> spawned_ranks;
  /// Loads `copies` copies of the program `command` (mpirun's Module, kept to the run's end) and
  /// returns their mains, or throws an MpiError that says why not.
  std::function<std::vector<int (*)(int, char**)>(const std::string& command, int copies)> load_program;
  /// VP v's MPI state, if v runs an MPI process (-np's ranks, and those spawned so far).
  RankState* find_rank(int v) {
    if (v >= 0 && v < np) return &ranks[static_cast<std::size_t>(v)];
    if (v < np || static_cast<std::size_t>(v - np) >= spawned_ranks.size()) return nullptr;
    return spawned_ranks[static_cast<std::size_t>(v - np)].get();
  }
  RankState& rank(int v) { return *find_rank(v); }
  /// MPI_UNIVERSE_SIZE: the machine's processors where spawns may start processes, -np otherwise.
  int universe() const { return split ? np : nodes; }
  std::map<std::string, std::string> coll;  ///< collective -> algorithm
  std::string coll_selector;                 ///< "mpich", "ompi", or "" (the defaults): coll_select.hpp
  std::optional<int> abort_code;
  std::string abort_report;
  double compute_factor = 0;  ///< --compute host:FACTOR (virtual per host CPU time); 0: compute is free
  // Checking programs (check.hpp): whether collectives and message type signatures are checked
  // (--no-check turns them off), whether leaks found at MPI_Finalize are errors (--check), and the
  // state the ranks share for those checks.
  bool check_consistency = true;
  /// A run split over processes (docs/parallel.md): the members of a collective may enter it in
  /// different processes, which compare their calls at each window's end (check.hpp split_checks).
  bool split = false;
  /// ... there: ends what `rank` wrote so far as a piece of its own at a collective's entry, and
  /// says its number (RankOutput::cut); drops what `rank` wrote from piece `piece` of its turn at
  /// `at` (at `place` among that instant's) on, when that entry is found to fail the run
  /// (RankOutput::drop_from).
  std::function<std::uint32_t(int rank)> cut_output;
  std::function<void(int rank, Time at, std::uint64_t place, std::uint32_t piece)> drop_output_from;
  bool leaks_are_errors = false;
  std::shared_ptr<CheckState> checks;
  /// mpirun --check: a nonblocking receive lands in a staging copy, so that a write of the program
  /// into its buffer before it completes is found (check.hpp own_buffer).
  bool owned_receive_buffers = false;
  /// mpirun --check: every blocking collective synchronizes its members on entry (call.cpp).
  bool synchronizing_collectives = false;
  /// --races: the wildcard receives and probes the ranks posted, by (world rank, the runtime's
  /// number of the call: Race::call), as the program made them, for race reports in its terms.
  bool races = false;
  std::map<std::pair<int, std::uint64_t>, std::string> wildcard_calls;
  /// Their communicators' ranks by context, kept when the program frees them: the world rank of
  /// each member of the point-to-point group, from which the senders' ranks start (remote_base).
  struct RaceComm {
    std::vector<int> members;
    int remote_base = 0;
  };
  std::map<std::uint64_t, RaceComm> race_comms;
  /// With -np below the machine's VPs: the first rank's MPI_COMM_WORLD group (ranks 0..np-1), which
  /// the others make theirs like (Proc::group_like) instead of listing np members each (env.cpp).
  Group first_world;
  /// The files open on this process, by the context of the communicator each opening made: the
  /// members of one MPI_File_open share its descriptor and its shared file pointer (file.cpp).
  std::map<std::uint64_t, std::weak_ptr<OpenFile>> open_files;
  /// The ports open on this process (MPI_Open_port), by name, with the world rank that opened each,
  /// and the names published for them (MPI_Publish_name): service name -> (port name, publisher).
  std::map<std::string, int> open_ports;
  std::map<std::string, std::pair<std::string, int>> published;
  /// The IP sockets whose first end has called MPI_Comm_join, by (own address, peer's), with its rank.
  std::map<std::string, int> joins;
  /// The context of the machine's group of every VP, on which connections and spawns carry their
  /// requests (dynamic.cpp), once a rank made its world (make_world_groups); no communicator has it.
  std::optional<std::uint64_t> machine_context;
};

/// The session of the run in progress (set by launch()), for code that reads or writes what the
/// ranks share: called on a rank, it first waits for the rank's turn in the sequential order
/// (Proc::await_turn), since the rank's code may be running beside other ranks' (the programs of
/// an instant, docs/parallel.md).
Session* session();
/// The same session without a turn, for what no rank changes during the run (its settings: np,
/// check_consistency, coll, ...) and for a rank's own part of it.
const Session& settings();
void set_session(Session* s);

}  // namespace touchstone::mpi
