// Checking MPI programs (docs/debugging.md, "Checking MPI programs"): errors the standard leaves
// undetected, found at the call that makes them, in MPI's terms. Internal.
//
//   - Collective consistency: every member of a communicator enters the same collectives in the same
//     order, with the same root and operator and matching type signatures. Each collective call
//     publishes a descriptor at entry, before any message: the first member to enter the n-th
//     collective of a communicator records it in state the ranks share, each later one compares.
//   - Type signatures of messages: a send records its signature (a hash of its sequence of basic
//     types) beside the message; the receive that gets it compares its own.
//   - Lifecycle: what MPI_Finalize finds still allocated or active.
// All of it costs no virtual time: nothing is sent, nothing waits.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "state.hpp"
#include "touchstone/run.hpp"

namespace touchstone::mpi {

/// A type signature, count elements of a type: its sequence of basic types as a polynomial hash
/// (equal sequences, however built, hash alike), its length, its bytes, and whether it holds
/// MPI_BYTE or MPI_PACKED, which match any signature of as many bytes.
struct Signature {
  std::uint64_t hash = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  bool untyped = false;
  bool operator==(const Signature& o) const {
    return untyped || o.untyped ? bytes == o.bytes : hash == o.hash && elements == o.elements;
  }
};
Signature signature(const Type& t, std::size_t count);

/// What a collective call passes, as its peers must see it. `unit` is the signature every member
/// must give alike (the data of a broadcast or a reduction, one rank's block of a gather);
/// `shape` another such value (the counts of MPI_Reduce_scatter and MPI_Allgatherv). With
/// `per_rank` (MPI_Gatherv, MPI_Scatterv) each member's `unit` is its own block, which must equal
/// the root's entry for it in the root's `blocks`.
struct Collective {
  const char* name = nullptr;
  static constexpr int kNoRoot = -1 - (1 << 30);
  int root = kNoRoot;
  MPI_Op op = MPI_OP_NULL;
  bool has_unit = false;
  Signature unit;
  bool has_shape = false;
  std::uint64_t shape = 0;
  bool per_rank = false;
  std::vector<Signature> blocks;
  /// MPI_Alltoallv, MPI_Alltoallw: the block sent to and received from each rank, each as a count
  /// of a datatype and its signature, which must equal the peer's block for this rank.
  struct Block {
    int count;
    MPI_Datatype type;
    Signature sig;
  };
  std::vector<Block> sends, recvs;
  /// Whether `op` is significant: on every call of an intracommunicator; on an intercommunicator
  /// on the calls that reduce, except the MPI_PROC_NULL members of a root's group.
  bool has_op = false;
  /// On an intercommunicator (MPI-3.1 5.2.2): the rooted calls' `root` is MPI_ROOT, MPI_PROC_NULL
  /// or a rank of the root's group, which the members check between the groups; the root's `blocks`
  /// are by rank of the other group, whose members give their own `unit` (`per_rank`). `unit` and
  /// `op` are compared across both groups, `shape` within the caller's group (MPI_Reduce_scatter's
  /// counts), and `sends` and `recvs` are by rank of the other group.
  bool inter = false;
  /// Neighborhood collectives (MPI-3.1 7.6): the topology's `sources` and `destinations` of the
  /// calling rank, `recvs` and `sends` by their position; a Cartesian block sent in direction slot
  /// k lands in the neighbour's slot k ^ 1, a graph's k-th block to a peer in its k-th from us.
  bool neighborhood = false;
  bool cartesian = false;
  std::vector<int> sources, destinations;
  std::string args;  ///< the arguments as the report prints them: "count=4, MPI_INT, MPI_SUM"
};

// The descriptor of each intracommunicator collective's call, from its arguments as the MPI
// function gets them; each checks what the standard makes significant on the calling rank (count,
// datatype, root) as the collective's body does, and nothing else.
/// MPI_Bcast (op MPI_OP_NULL), MPI_Reduce, and with root kNoRoot MPI_Allreduce, MPI_Scan, MPI_Exscan
/// and MPI_Reduce_scatter_block.
Collective describe_data(RankState& rs, const Comm& c, const char* name, int count, MPI_Datatype t, int root,
                         MPI_Op op);
/// MPI_Gather (`gather`) and MPI_Scatter: one block per rank, the root's buffer holding them all.
Collective describe_rooted(RankState& rs, const Comm& c, const char* name, bool gather, const void* sendbuf,
                           int sendcount, MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root);
/// MPI_Gatherv and MPI_Scatterv: the root's `counts` of `root_type`, each member's `count` of `type`.
Collective describe_rooted_v(RankState& rs, const Comm& c, const char* name, bool gather, int root,
                             const int root_counts[], MPI_Datatype root_type, int count, MPI_Datatype type,
                             bool root_in_place);
/// MPI_Allgather and MPI_Alltoall: every rank's blocks alike, and its own send block like them.
Collective describe_all(RankState& rs, const Comm& c, const char* name, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, bool alltoall);
/// MPI_Allgatherv: the same receive counts on every rank, and its own block as its count says.
Collective describe_allgatherv(RankState& rs, const Comm& c, const char* name, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype);
/// MPI_Alltoallv (`sendtypes` and `recvtypes` of one entry each) and MPI_Alltoallw (one per rank).
Collective describe_pairwise(RankState& rs, const Comm& c, const char* name, const void* sendbuf,
                             const int sendcounts[], const MPI_Datatype sendtypes[], const int recvcounts[],
                             const MPI_Datatype recvtypes[], bool per_block_types);
/// A collective compared by its name and order alone (MPI_Barrier, a call whose arguments are bad).
Collective describe_name(const char* name);
/// MPI_Reduce_scatter: the same counts, datatype and operator on every rank.
Collective describe_reduce_scatter(RankState& rs, const Comm& c, const char* name, const int recvcounts[],
                                   MPI_Datatype t, MPI_Op op);
/// MPI_Reduce_scatter_block: describe_data, and on an intercommunicator MPI_Reduce_scatter's.
Collective describe_reduce_scatter_block(RankState& rs, const Comm& c, const char* name, int recvcount, MPI_Datatype t,
                                         MPI_Op op);
// On an intercommunicator each of the above describes the intercommunicator form: roots MPI_ROOT,
// MPI_PROC_NULL or a rank of the other group, blocks by rank of the other group.

/// The neighborhood collectives: the block sent to each destination and received from each source
/// of the communicator's topology (`sendtypes` and `recvtypes` of one entry each unless
/// `per_block_types`, MPI_Neighbor_alltoallw). The sides `varying` names take their counts from
/// the user's arrays, which must not be null (MPI_ERR_ARG); on the others `sendcounts` or
/// `recvcounts` is null and `sendcount` or `recvcount` goes to or comes from every neighbour.
enum class Varying { none, recvs, both };
Collective describe_neighbor(RankState& rs, const Comm& c, const char* name, int sendcount, const int sendcounts[],
                             const MPI_Datatype sendtypes[], int recvcount, const int recvcounts[],
                             const MPI_Datatype recvtypes[], bool per_block_types, Varying varying = Varying::none);

/// The arguments of a collective, printed as reports name them.
std::string type_text(RankState& rs, MPI_Datatype t);
std::string op_text(MPI_Op op);

/// Compares the calling rank's collective `d` on communicator `comm` with its peers' n-th call
/// (n its count of collectives entered on it); MpiError naming both calls on a mismatch.
void check_collective(RankState& rs, MPI_Comm comm, Collective d);
/// The same for a collective with nothing to compare but its name (MPI_Barrier, communicator
/// creation).
void check_collective(RankState& rs, MPI_Comm comm, const char* name);
/// The n-th MPI_Start of a persistent collective made by `init` on `comm` (c as the init saw it):
/// compared with the n-th start of the same request on its peers, whose instances run on a group
/// of their own (`context`), as the call it stands for would be.
void check_start(RankState& rs, MPI_Comm comm, const Comm& c, std::uint64_t context, std::uint64_t n, Collective d,
                 const CallSite& init);
/// A send's or receive's own signatures compared (MPI_Allgather: the block a rank sends is one it
/// receives): MpiError naming both when they differ.
void check_own_blocks(const char* what, const Signature& send, const std::string& send_text, const Signature& recv,
                      const std::string& recv_text);

/// A run split over processes (RunOptions::partition), this process running ranks [first, end):
/// the record of each message sent to another process's rank travels in the window's notes
/// (RunOptions::window_notes) to its receiver's process, which checks it as one process would. A
/// collective call is published there too, with everything its reports need named in its rank's
/// process, and every process compares the window's calls of every process at its end, in the
/// sequential order (RunOptions::window_failure): the first mismatch fails the run at its call's turn.
void split_checks(Session& s, RunOptions& ro, int first, int end);
/// Whether world rank `world`'s program runs in this process: in a split run, its share of the ranks.
bool runs_here(int world);
/// A split run, MPI one-sided checks: what target's window `handle` holds for the passive-target
/// accesses of an origin in another process (the conflict one of them made, or "" for none), told to
/// the origin's process in the window's notes whenever a handler changes it. The origin's flush or
/// unlock takes it there (known before the reply that completes them can arrive); a conflict it
/// takes is told back as read, and the target forgets it at its next handler for that origin, before
/// any later access of the origin's arrives: as in one process, where the origin reads and clears
/// the target's record itself.
void tell_lock_conflict(int target, int handle, int origin, const std::string& text);
std::string take_told_lock_conflict(int target, int handle, int origin);
bool take_lock_conflict_read(int target, int handle, int origin);
/// A split run's dynamic windows (MPI_Win_create_dynamic): a target's attached regions live in its
/// own process. Each change (`attach` false: a detach; `reset`: the window is made) is told to every
/// process at the window's end, and an origin in another process checks an access against the
/// regions as the window's start found them (attached_elsewhere). A correct program learns of an
/// attach, and lets go of memory before its detach, through a message: in another window. An access
/// outside them whose error would end the run is accepted at its call (its target may have attached
/// the memory since). Each such access is checked again at the window's end against the window's
/// changes in the sequential order (note_remote_access); where the verdicts differ, the run fails at
/// the access as one process would have, or, where one process would have accepted an access whose
/// error was returned to its call, with an error that says why.
using Regions = std::vector<std::pair<std::uintptr_t, std::size_t>>;
void note_attached(RankState& rs, std::int64_t handle, std::uintptr_t at, std::size_t size, bool attach,
                   bool reset = false);
const Regions& attached_elsewhere(int world, std::int64_t handle);
/// Whether `regions` cover [lo, hi): adjacent regions attached one by one serve as one.
bool covers(Regions regions, std::uintptr_t lo, std::uintptr_t hi);
/// `covered`: the verdict at the call (accepted); `error`: what the access raises if it is not
/// covered; `fatal`: whether its window's error handler ends the run (its report then being
/// `fatal_report`).
void note_remote_access(RankState& rs, int target_world, std::int64_t handle, std::uintptr_t lo, std::uintptr_t hi,
                        bool covered, const MpiError& error, bool fatal, std::string fatal_report);
/// The signature of a message about to be sent on `c` from this rank to group rank `to`.
void record_send(RankState& rs, const Comm& c, int to, int tag, int count, MPI_Datatype dt, const Type& t);
/// A completed receive `q` of a message from group rank `from` with `tag` on c: compares the
/// message's signature with the receive's; sets q.signature_error on a mismatch.
void check_receive(RankState& rs, const Comm& c, Req& q, int from, int tag, std::size_t bytes);

/// "MPI_COMM_WORLD", the name MPI_Comm_set_name gave, or how the communicator was made.
std::string comm_text(RankState& rs, MPI_Comm comm);
/// How a communicator made now from `parent` came to be: "MPI_Comm_split of MPI_COMM_WORLD".
std::string made_from(RankState& rs, const Comm& parent);
/// " at FILE:LINE" for a call of the program's, "" when the program has no line information.
std::string site_text(const void* caller);

/// Deadlock reports (RunOptions::describe_blocked): the MPI call a blocked rank is in, with the
/// request it waits for and their source lines: "MPI_Recv(source=0, tag=7, MPI_COMM_WORLD) at
/// prog.c:9", "MPI_Waitall at prog.c:16 for MPI_Irecv(...) at prog.c:15", "inside MPI_Bcast on
/// MPI_COMM_WORLD at prog.c:18". Empty outside an MPI call.
std::string blocked_text(RankState& rs, const std::vector<RunOptions::PendingOp>& waits_for);
/// A request as the program posted it, with its line: "MPI_Irecv(source=1, tag=3, MPI_COMM_WORLD) at
/// prog.c:15".
std::string request_text(RankState& rs, const Req& q);
/// Deadlock reports (RunOptions::describe_finished): the last error an MPI call returned to a rank
/// that finished, "the last error returned to it: MPI_Scatterv on MPI_COMM_WORLD at prog.c:8: ...";
/// empty when none was.
std::string finished_text(RankState& rs);
/// Deadlock reports (RunOptions::describe_message): an unreceived point-to-point message in the
/// ranks of its communicator, with the call that sent it; empty for a collective's own messages.
std::string message_text(Session& s, const RunOptions::UnreceivedMessage& m);

/// Race reports (--races): remembers a wildcard receive or probe the rank just posted, the
/// runtime's call number `call` (Proc::last_receive_call), in the program's terms; race_text
/// (RunOptions::describe_race) gives a race's paragraph with it: the MPI call and its line, the
/// ranks of its communicator and the user's tags. Empty for a race of no remembered call.
void note_wildcard(RankState& rs, std::uint64_t call, const char* mpi_call, const void* caller, int source, int tag,
                   MPI_Comm comm);
std::string race_text(Session& s, const Race& race);

/// Buffer ownership: a nonblocking or started persistent send or receive `q` owns its buffer until
/// it completes. Its checksum is taken at the post or MPI_Start (contiguous data only: a packed send
/// is already copied, a non-contiguous receive lands in a staging copy) and compared by
/// check_owned_buffer at completion, before a staged message is copied in; it sets q.buffer_error
/// when the program wrote into the buffer meanwhile (the completion then lets go of q.owned).
void own_buffer(RankState& rs, Req& q, const void* buf, std::size_t bytes);
/// Whether the buffers of rs's operations are owned: checks on (not --no-check) and real payloads.
bool owns_buffers(RankState& rs);
/// One run of a collective's buffers, owned by q (its checksum taken now): own_buffer's for the
/// several buffers, and v-form blocks, of a nonblocking or persistent collective (icoll.cpp).
void own_run(Req& q, OwnedRun run);
/// A checksum of n bytes that tells a changed buffer from the same (vectorized, about a cycle per
/// 32 bytes): the buffer ownership checks', and the RMA checks' (rma_ops.cpp).
std::uint64_t checksum(const void* data, std::size_t n);
void check_owned_buffer(RankState& rs, Req& q);

/// Remembers the call that made handle `h` of kind 'g' (group), 't' (datatype), 'o' (operation) or 'f' (file).
void made(RankState& rs, char kind, int h);
void unmade(RankState& rs, char kind, int h);
/// The files rank rs still has open (file.cpp): each one's handle, name and private communicator,
/// which the lifecycle check names as the file rather than as a communicator of its own.
struct FileLeft {
  MPI_File handle;
  std::string name;
  MPI_Comm comm;
};
std::vector<FileLeft> files_left_open(const RankState& rs);
/// MPI_Finalize's lifecycle check: every communicator, file, group, datatype, operation, attached buffer
/// and request the rank still holds, and the requests it freed while active, as warnings on
/// stderr, or as MPI_ERR_OTHER (MpiError) under `touchstone mpirun --check`.
void check_lifecycle(RankState& rs);

}  // namespace touchstone::mpi
